"""Robustness suite hooks: the 50 MB ingest starts in the background right after collection.

It is one long single-threaded process; started first, it runs while the other tests (mostly
waiting on the model or on subprocesses) use the other core, instead of adding its minutes at the
end. It only starts when its test was selected; it is stopped and cleaned up when the session ends.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))  # crash_runner, large_runner: also under --import-mode=importlib

import large_runner  # noqa: E402

LARGE_TEST = "test_large_text_file_ingests_with_bounded_memory"


def pytest_collection_finish(session):
    if session.config.option.collectonly:
        return
    if any(item.name == LARGE_TEST for item in session.items):
        session.config.stash[large_runner.JOB_KEY] = large_runner.start()


def pytest_sessionfinish(session):
    job = session.config.stash.get(large_runner.JOB_KEY, None)
    if job is not None:
        job.cleanup()
