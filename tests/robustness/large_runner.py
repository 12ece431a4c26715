"""The 50 MB ingest, run in its own process so its memory can be measured alone.

    python tests/robustness/large_runner.py WORKDIR SIZE_MB

Writes WORKDIR/corpus/big-export.txt (SIZE_MB of Italian prose in paragraphs, law headings,
numbered examples, a form feed per "page", as a text export of a long PDF would be), then runs
`python -m ingest --no-embed` in this process and writes WORKDIR/result.json: exit code, peak RSS
before and after the ingest (`resource.getrusage`, KiB), seconds, and the printed summary.

`start()` launches it in the background (the robustness conftest does so right after collection,
so the other tests run meanwhile); `Job.wait()` returns the result.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SIZE_MB = 50
JOB_KEY = pytest.StashKey["Job"]()

WORDS = ("il morto ha giocato una carta non nominata dal dichiarante e l'arbitro è stato chiamato subito "
         "perché la carta nominata per errore può essere cambiata se non c'è pausa per riflettere; "
         "il difensore ha esposto una carta durante la licita e la penalità dipende dalla situazione").split()


def write_export(path: Path, size_mb: int, seed: int = 45) -> None:
    rnd = random.Random(seed)
    target = size_mb * 1024 * 1024
    written, line_no, law, example = 0, 0, 1, 0
    with open(path, "w", encoding="utf-8") as f:
        while written < target:
            line_no += 1
            if line_no % 60 == 0:
                law = law % 93 + 1
                example = 0
                chunk = f"\f\nART. {law}\n\n"
            elif line_no % 20 == 10:
                example += 1
                chunk = (f"\n{example}\n\nSud è dichiarante a 2 picche. Chiama il fante al morto, seguito da "
                         f"\"ops!, il re\". L'arbitro l'autorizza a giocare il re?\n\nNO (L{law}C4b)\n\n")
            elif line_no % 6 == 0:
                chunk = "\n"
            else:
                chunk = " ".join(rnd.choice(WORDS) for _ in range(13)).capitalize() + ".\n"
            f.write(chunk)
            written += len(chunk.encode("utf-8"))


def main(workdir: Path, size_mb: int) -> int:
    import contextlib
    import io
    import resource

    corpus, kb_dir = workdir / "corpus", workdir / "kb"
    corpus.mkdir(parents=True, exist_ok=True)
    write_export(corpus / "big-export.txt", size_mb)
    import ingest.__main__ as ingest_cli
    import kb.build  # noqa: F401 - imported before the baseline is taken

    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out = io.StringIO()
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(out):
        rc = ingest_cli.main(["--corpus", str(corpus), "--kb-dir", str(kb_dir), "--no-embed", "--quiet"])
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = {"rc": rc, "base_kib": base, "peak_kib": peak, "seconds": seconds, "summary": out.getvalue(),
              "bytes": (corpus / "big-export.txt").stat().st_size, "kb_dir": str(kb_dir)}
    (workdir / "result.json").write_text(json.dumps(result), encoding="utf-8")
    return 0


@dataclass
class Job:
    proc: subprocess.Popen
    workdir: Path
    started: float

    def wait(self, timeout: float) -> dict:
        left = max(1.0, timeout - (time.monotonic() - self.started))
        try:
            self.proc.wait(timeout=left)
        except subprocess.TimeoutExpired:
            self.stop()
            pytest.fail(f"the {SIZE_MB} MB ingest did not finish within {timeout:.0f} s")
        log = (self.workdir / "runner.log").read_text(encoding="utf-8", errors="replace")
        assert self.proc.returncode == 0, log[-3000:]
        return json.loads((self.workdir / "result.json").read_text(encoding="utf-8"))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)


def start(size_mb: int = SIZE_MB) -> Job:
    workdir = Path(tempfile.mkdtemp(prefix="kb-large-ingest-"))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    with open(workdir / "runner.log", "wb") as log:
        proc = subprocess.Popen([sys.executable, str(Path(__file__)), str(workdir), str(size_mb)], cwd=workdir,
                                env=env, stdout=log, stderr=subprocess.STDOUT)
    return Job(proc, workdir, time.monotonic())


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), int(sys.argv[2])))
