"""A 50 MB text file ingests with bounded memory and finishes (no model: --no-embed).

The ingest runs in its own process (see large_runner.py; started in the background by the
robustness conftest) and measures its own peak RSS with resource.getrusage before and after.
"""

from __future__ import annotations

import re

import large_runner
import pytest

from kb import KnowledgeBase

LIMIT_KIB = int(1.5 * 1024 * 1024)  # 1.5 GB of growth over the process after its imports
TIMEOUT_S = 900


@pytest.mark.slow
def test_large_text_file_ingests_with_bounded_memory(request):
    job = request.config.stash.get(large_runner.JOB_KEY, None) or large_runner.start()
    res = job.wait(TIMEOUT_S)
    growth = res["peak_kib"] - res["base_kib"]
    print(f"\n{res['bytes'] / 2**20:.0f} MB ingested in {res['seconds']:.0f} s; peak RSS growth "
          f"{growth / 1024:.0f} MB (base {res['base_kib'] / 1024:.0f} MB)")
    assert res["bytes"] >= large_runner.SIZE_MB * 2**20
    assert res["rc"] == 0, res["summary"]
    assert growth < LIMIT_KIB, f"peak RSS grew by {growth / 1024:.0f} MB"
    line = next(ln for ln in res["summary"].splitlines() if "big-export.txt:" in ln)
    assert line.strip().startswith("ok")
    passages = int(re.search(r"(\d+) passages", line).group(1))
    assert passages > 10_000
    kb = KnowledgeBase.open(res["kb_dir"])
    assert kb.stats().passages == passages
    assert kb.search("carta nominata per errore", k=3).hits
