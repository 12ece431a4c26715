"""One build at a time per knowledge base: a second build waits, then sees the corpus as it is then."""

from __future__ import annotations

import threading
import time

import numpy as np

from kb import KnowledgeBase
from kb.build import build, build_lock


class SlowEmbedder:
    """A deterministic embedder that can be held inside encode_passages."""

    name, dim = "slow-test-embedder", 16

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    def _vecs(self, texts):
        rng = [np.random.default_rng(sum(map(ord, t)) % 2**32).standard_normal(self.dim) for t in texts]
        out = np.array(rng, dtype=np.float32).reshape(len(texts), self.dim)
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)

    def encode_queries(self, texts):
        return self._vecs(list(texts))

    def encode_passages(self, texts, batch_size=32, progress=None):
        self.entered.set()
        self.release.wait(30)
        return self._vecs(list(texts))


def test_a_second_build_waits_and_keeps_the_file_added_meanwhile(tmp_path):
    corpus, kb_dir = tmp_path / "corpus", tmp_path / "kb"
    corpus.mkdir()
    (corpus / "a.txt").write_text("ART.41 - INIZIO\nA. Il dichiarante gioca una carta dal morto.\n", encoding="utf-8")
    slow = SlowEmbedder()
    first = threading.Thread(target=build, args=(corpus, kb_dir), kwargs={"embedder": slow})
    first.start()
    assert slow.entered.wait(30)  # the first build has read the corpus and is embedding
    (corpus / "b.txt").write_text("ART.64 - RENONCE\nA. Una renonce consumata comporta il trasferimento "
                                  "di prese.\n", encoding="utf-8")
    fast = SlowEmbedder()
    fast.release.set()
    stages: list[str] = []
    second = threading.Thread(target=build, args=(corpus, kb_dir),
                              kwargs={"embedder": fast, "progress": lambda s, d, t, x: stages.append(s)})
    second.start()
    time.sleep(0.5)
    assert not fast.entered.is_set() and "wait" in stages  # blocked behind the first build
    slow.release.set()
    first.join(30)
    second.join(30)
    docs = {d["name"] for d in KnowledgeBase.open(kb_dir).documents()}
    assert docs == {"a.txt", "b.txt"}  # the last generation live has both: nothing was lost


def test_the_lock_is_released_after_a_failing_build(tmp_path):
    kb_dir = tmp_path / "kb"

    class Boom(SlowEmbedder):
        def encode_passages(self, texts, batch_size=32, progress=None):
            raise RuntimeError("model exploded")

    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "a.txt").write_text("ART.41 - INIZIO\nA. Un testo.\n", encoding="utf-8")
    try:
        build(corpus, kb_dir, embedder=Boom())
    except RuntimeError:
        pass
    done = threading.Event()

    def take() -> None:
        with build_lock(kb_dir):
            done.set()

    t = threading.Thread(target=take)
    t.start()
    t.join(5)
    assert done.is_set()
