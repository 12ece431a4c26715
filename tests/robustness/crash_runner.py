"""Runs one real ingest (kb.build.build) and freezes it at a chosen point, for the SIGKILL tests.

    python tests/robustness/crash_runner.py CORPUS KB_DIR POINT MARKER [--embedder fake|real|none]

At POINT the process writes MARKER (its pid) and sleeps; the test waits for the marker and kills
it with SIGKILL, then checks that the previous knowledge base is untouched. Points:

    load    after the first file of the corpus was read, while the others are being loaded
    embed   half of the passages encoded, the other half not yet (inside encode_passages)
    store   a couple of passages inserted into the new generation's SQLite, not committed
    index   the FAISS file half written (written, then cut to half its size)
    swap    the generation complete and renamed into place, CURRENT not yet replaced

Also importable: `FakeEmbedder`, a deterministic stand-in for the model (bag of hashed words,
384 dimensions, L2-normalised) so that builds and dense search run in milliseconds.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import time
from pathlib import Path

import numpy as np

POINTS = ("load", "embed", "store", "index", "swap")


class FakeEmbedder:
    name = "fake-hash-embedder@tests"
    dim = 384

    def _vec(self, text: str) -> np.ndarray:
        v = np.zeros(self.dim, dtype=np.float32)
        for w in re.findall(r"\w+", text.lower()):
            v[int(hashlib.md5(w.encode()).hexdigest()[:8], 16) % self.dim] += 1.0
        n = np.linalg.norm(v)
        return v / n if n else v

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        return np.stack([self._vec(t) for t in texts]).astype(np.float32)

    def encode_passages(self, texts: list[str], batch_size: int = 32, progress=None) -> np.ndarray:
        out = self.encode_queries(texts) if texts else np.zeros((0, self.dim), dtype=np.float32)
        if progress:
            progress(len(texts), len(texts))
        return out


def _freeze(marker: Path) -> None:
    """Say where we are, then wait to be killed (never returns on its own within a test's time)."""
    tmp = marker.with_name(marker.name + ".tmp")
    tmp.write_text(str(os.getpid()))
    os.replace(tmp, marker)
    time.sleep(600)
    sys.exit(3)  # the test did not kill us: make that visible


def main(argv: list[str]) -> int:
    corpus, kb_dir, point, marker = Path(argv[0]), Path(argv[1]), argv[2], Path(argv[3])
    which = argv[argv.index("--embedder") + 1] if "--embedder" in argv else "fake"
    assert point in POINTS, point

    import kb.store as store
    from kb.build import build

    progress = None
    if which == "real":
        from kb.embed import get_embedder

        embedder = get_embedder()
    elif which == "fake":
        embedder = FakeEmbedder()
    else:
        embedder = None

    if point == "load":
        def progress(stage: str, done: int, total: int, detail: str) -> None:
            if stage == "load" and done == 1 < total:
                _freeze(marker)

    elif point == "embed":
        inner = embedder.encode_passages

        def encode_passages(texts, batch_size=32, progress=None):
            half = max(1, len(texts) // 2)
            inner(texts[:half], batch_size=batch_size)
            _freeze(marker)

        embedder.encode_passages = encode_passages

    elif point == "store":
        add = store.GenerationWriter.add_passage
        count = {"n": 0}

        def add_passage(self, p, terms, vec_key):
            rowid = add(self, p, terms, vec_key)
            count["n"] += 1
            if count["n"] == 2:
                _freeze(marker)
            return rowid

        store.GenerationWriter.add_passage = add_passage

    elif point == "index":
        import faiss

        write = faiss.write_index

        def write_index(index, path):
            write(index, path)
            size = os.path.getsize(path)
            with open(path, "r+b") as f:
                f.truncate(size // 2)
            _freeze(marker)

        faiss.write_index = write_index

    elif point == "swap":
        write_atomic = store._write_atomic

        def _write_atomic(path, text):
            if Path(path).name == "CURRENT":
                _freeze(marker)
            write_atomic(path, text)

        store._write_atomic = _write_atomic

    build(corpus, kb_dir, embedder=embedder, progress=progress, embed=which != "none")
    return 4  # finished without reaching the point: the test reports it


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
