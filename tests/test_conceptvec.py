"""Concept vectors: the glossary's dense queries composed from vectors embedded at build time."""

from __future__ import annotations

import sqlite3
from dataclasses import replace

import numpy as np
import pytest

from kb.conceptvec import ConceptVectors, concept_texts
from kb.glossary import default_glossary
from kb.search import Weights, dense_queries


def _unit(v):
    return v / np.linalg.norm(v)


def test_concept_texts_cover_every_concept_in_it_en_el():
    g = default_glossary()
    items = concept_texts(g)
    assert {(c, lg) for c, lg, _ in items} == {(c.id, lg) for c in g for lg in ("it", "en", "el")}
    revoke = {lg: t for c, lg, t in items if c == "revoke"}
    assert "ρενόνς" in revoke["el"].lower() and "revoke" in revoke["en"].lower()


def test_composition_is_the_unit_sum():
    rng = np.random.default_rng(0)
    m = np.stack([_unit(v) for v in rng.standard_normal((4, 8))]).astype(np.float32)
    cv = ConceptVectors({("a", "it"): 0, ("a", "en"): 1, ("b", "it"): 2, ("b", "en"): 3}, m)
    assert np.allclose(cv.target(["a", "b"], "it"), _unit(m[0] + m[2]), atol=1e-6)
    assert cv.target(["zzz"], "it") is None and cv.target(["a"], "el") is None
    q = _unit(rng.standard_normal(8)).astype(np.float32)
    got = cv.with_question(q, ["a", "b"], ["it", "en"])
    assert np.allclose(got, _unit(q + _unit(m.sum(0))), atol=1e-6)
    assert abs(np.linalg.norm(got) - 1) < 1e-5


def test_a_store_without_the_table_means_the_exact_path():
    conn = sqlite3.connect(":memory:")
    assert ConceptVectors.load(conn) is None


class _Recorder:
    """An encoder that records what it is asked to embed (deterministic unit vectors)."""

    def __init__(self):
        self.calls = []

    def __call__(self, texts):
        self.calls.append(list(texts))
        out = np.stack([_unit(np.random.default_rng(abs(hash(t)) % 2**32).standard_normal(8)) for t in texts])
        return out.astype(np.float32)


def test_composed_search_embeds_only_the_question():
    g = default_glossary()
    ids = g.concept_ids("the defender revoked and the declarer claimed the rest")
    assert ids
    m = np.stack([_unit(np.ones(8) + i) for i in range(3 * len(ids))]).astype(np.float32)
    cv = ConceptVectors({(c, lg): 3 * i + j for i, c in enumerate(ids) for j, lg in enumerate(("it", "en", "el"))},
                        m)
    q = "the defender revoked and the declarer claimed the rest"
    enc = _Recorder()
    w = replace(Weights(), dense_expand=0.5, dense_target=0.5)
    vecs, weights = dense_queries(q, "en", w, enc, cv)
    assert enc.calls == [[q]]
    assert len(vecs) == len(weights) == 4  # question, question + jargon, Italian jargon, Greek jargon
    exact = _Recorder()
    evecs, eweights = dense_queries(q, "en", replace(w, compose=False), exact, cv)
    assert weights == eweights and len(exact.calls[0]) == 4 and exact.calls[0][0] == q
    assert evecs.shape == vecs.shape


@pytest.mark.slow
def test_built_kb_composes_close_to_the_embedded_texts(kb):
    """Against the model on the real glossary: composed vectors point where the embedded texts do."""
    cv = kb._concept_vectors(kb._gen)
    assert cv is not None and len(cv.index) == len(concept_texts(default_glossary()))
    emb = kb.embedder()
    q = "il difensore ha fatto renonce e il dichiarante ha reclamato le prese restanti"
    w = replace(Weights(), dense_expand=0.5, dense_target=0.5)
    composed, _ = dense_queries(q, "it", w, emb.encode_queries, cv)
    exact, _ = dense_queries(q, "it", replace(w, compose=False), emb.encode_queries, cv)
    cos = (composed * exact).sum(1)
    # The question's own vector is the model's; the composed ones approximate texts of several concepts. With the
    # adapter (trained on single terms as questions about their laws) the approximation is looser: cosine
    # 0.68-0.75 to the embedded texts (0.85+ with the plain model), one reason those lists are off by default.
    assert cos[0] > 0.9999 and cos.min() > 0.6
