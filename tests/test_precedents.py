"""Precedents: the laws of the nearest labelled questions as votes in the ranking (kb/precedents.py)."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace

import numpy as np
import pytest

from kb.precedents import (
    Precedents,
    load_questions,
    merge_hints,
    precedent_key,
    question_text,
    shipped_vectors,
)


def _unit(v):
    v = np.asarray(v, dtype=np.float32)
    return v / np.linalg.norm(v)


def _precedents():
    # four precedents in 3-d: two near the x axis (64A / 64B), one near y (45C4b), one on z (61B)
    m = np.stack([_unit([1, 0.1, 0]), _unit([1, 0.3, 0]), _unit([0.2, 1, 0]), _unit([0, 0, 1])])
    return Precedents(m, [("64A",), ("64B", "63A1"), ("45C4b",), ("61B",)])


def test_questions_are_read_with_their_laws_and_bad_lines_skipped(tmp_path):
    (tmp_path / "a.jsonl").write_text("\n".join([
        json.dumps({"id": "q1", "query": "he revoked", "gold": ["64A1"]}),
        "not json",
        json.dumps({"id": "q2", "query": "", "gold": ["64A"]}),  # no question
        json.dumps({"id": "q3", "query": "card exposed", "gold": ["art. 50", "50D"]}),  # one law not canonical
        json.dumps({"id": "q4", "query": "nothing", "gold": []}),
        "",
    ]), encoding="utf-8")
    got = load_questions(tmp_path)
    assert [(p.id, p.text, p.laws) for p in got] == [("q1", "he revoked", ("64A1",)), ("q3", "card exposed", ("50D",))]


def test_shipped_questions_all_have_laws():
    got = load_questions()
    assert len(got) >= 800 and all(p.laws and p.text for p in got)
    assert len({p.id for p in got}) == len(got)


def test_votes_weight_the_nearest_by_similarity_and_the_top_law_is_one():
    p = _precedents()
    v = p.votes(_unit([1, 0.2, 0]), k=2)
    assert set(v) == {"64A", "64B", "63A1"}  # the two nearest only
    assert max(v.values()) == 1.0 and v["64B"] == v["63A1"]
    assert 0.9 < min(v.values()) <= 1.0
    far = p.votes(_unit([0, 0, 1]), k=1)
    assert far == {"61B": 1.0}
    assert p.votes(_unit([0, 0, -1]), k=1) == {}  # only negative similarity: no vote
    assert p.votes(np.ones(5, np.float32)) == {}  # another model's width: no vote


def test_a_law_no_precedent_covers_counts_as_unknown_not_as_no():
    p = _precedents()
    h = p.hints(_unit([1, 0.2, 0]), ["64A1", "67B", "67", "12C1", "45C4b"], k=2, unknown=0.5)
    assert h["67"] == 0.5 and h["12"] == 0.5  # uncovered law numbers
    assert "45" not in h and "45C4b" not in h  # covered but not voted: no lift
    assert h["64A"] > 0.99 and max(h.values()) == 1.0
    assert p.hints(_unit([1, 0.2, 0]), ["67B"], k=2, unknown=0.0).get("67") is None


def _spread(cosines):
    """Pairs of precedents, pair i at cosine `cosines[i]` to each other and orthogonal to every other pair (and to
    the last axis)."""
    dim = 2 * len(cosines) + 1
    rows, laws = [], []
    for i, c in enumerate(cosines):
        a, b = np.zeros(dim, np.float32), np.zeros(dim, np.float32)
        a[2 * i] = 1
        b[2 * i], b[2 * i + 1] = c, np.sqrt(1 - c * c)
        rows += [a, b]
        laws += [(f"{20 + i}A",), (f"{20 + i}B",)]
    return Precedents(np.stack(rows), laws)


def test_how_near_is_near_is_read_from_the_precedents_themselves():
    cos = np.linspace(0.4, 0.95, 12)
    p = _spread(cos)
    assert p.near == pytest.approx(float(np.median(cos)), abs=1e-5)
    assert p.far == pytest.approx(p.near - 2 * (p.near - float(np.percentile(np.repeat(cos, 2), 10))), abs=1e-5)
    assert p.confidence(p.near) == 1.0 and p.confidence(1.0) == 1.0 and p.confidence(p.far) == 0.0
    assert 0 < p.confidence((p.near + p.far) / 2) < 1
    assert _precedents().confidence(0.0) == 1.0  # too few precedents to tell: always 1


def test_a_question_far_from_every_precedent_hears_less_from_them():
    p = _spread(np.linspace(0.4, 0.95, 12))
    dim = p.matrix.shape[1]
    near = p.matrix[0]  # a precedent itself: full confidence
    assert p.hints(near, ["20A", "67B"], k=2) == p.hints(near, ["20A", "67B"], k=2, fade=False)
    top = (p.near + p.far) / 2  # half way: votes halved, an uncovered law half way from 0.5 to 1
    q = np.zeros(dim, np.float32)
    q[0], q[-1] = top, np.sqrt(1 - top * top)
    c = p.confidence(float((p.matrix @ q).max()))
    plain, faded = p.hints(q, ["20A", "67B"], k=2, fade=False), p.hints(q, ["20A", "67B"], k=2)
    assert 0.3 < c < 0.7 and plain["67"] == 0.5
    assert faded["20A"] == pytest.approx(plain["20A"] * c) and faded["67"] == pytest.approx(0.5 + 0.5 * (1 - c))
    lost = np.zeros(dim, np.float32)
    lost[0], lost[-1] = p.far / 2, np.sqrt(1 - p.far * p.far / 4)  # farther than far: no vote counts
    h = p.hints(lost, ["20A", "67B"], k=2)
    assert h["67"] == 1.0 and max(v for law, v in h.items() if law != "67") == 0.0


def test_merge_keeps_the_stronger_hint_per_law():
    got = merge_hints({"64A": 0.8, "50": 0.3}, {"64A": 0.5, "50": 1.0, "61B": 0.2}, weight=0.5)
    assert got == {"64A": 0.8, "50": 0.5, "61B": 0.1}
    assert merge_hints(None, {"61B": 1.0}, 1.0) == {"61B": 1.0}


def test_a_store_without_the_table_has_no_precedents():
    assert Precedents.load(sqlite3.connect(":memory:")) is None


def test_the_question_text_is_what_a_search_embeds():
    text = "West dealer.\n♠ A K 3 ♥ Q J 2 ♦ 10 9 8 ♣ A 7 6 5\nEast led out of turn"
    got = question_text(text)
    assert "led out of turn" in got and "A K 3" not in got  # the board's record is set aside


def test_shipped_vectors_fit_the_default_model_and_the_questions_as_they_are():
    """Fails when the adapter or the questions changed: run `python -m kb.precedents` to make them again
    (else every first build embeds 840 questions)."""
    from kb.embed import default_model_name

    shipped = shipped_vectors()
    name = default_model_name()
    keys = {precedent_key(name, p) for p in load_questions()}
    assert keys == set(shipped)
    assert all(abs(np.linalg.norm(v) - 1) < 1e-3 for v in shipped.values())


def test_missing_shipped_vectors_are_no_error(tmp_path):
    assert shipped_vectors(tmp_path / "none.safetensors") == {}
    (tmp_path / "bad.safetensors").write_bytes(b"not a zip")
    assert shipped_vectors(tmp_path / "bad.safetensors") == {}


# ---------------------------------------------------------------- in a knowledge base (real model)

@pytest.mark.slow
def test_the_build_keeps_the_precedents_and_takes_the_shipped_vectors(kb):
    precs = kb._precedents(kb._gen)
    assert precs is not None and len(precs.laws) == len(load_questions())
    shipped = np.stack(list(shipped_vectors().values()))
    assert np.abs(np.linalg.norm(precs.matrix, axis=1) - 1).max() < 1e-3
    # the same vectors, row for row, in some order: every stored row has a shipped twin
    assert (precs.matrix @ shipped.T).max(axis=1).min() > 0.9999


@pytest.mark.slow
def test_the_vote_lifts_the_voted_law(kb, monkeypatch):
    q = "the defender played a card from the wrong hand and then the declarer claimed"
    off = replace(kb.weights, precedents=0.0)
    before = kb.search(q, k=10, weights=off).hits
    target = before[6]
    law = target.laws[0]

    class _Stub:
        def hints(self, qvec, laws, k, unknown, fade=True):
            return {law: 1.0}

    monkeypatch.setattr(type(kb), "_precedents", lambda self, gen: _Stub())
    after = [h.id for h in kb.search(q, k=10, weights=replace(kb.weights, precedents=1.0)).hits]
    assert target.id in after and after.index(target.id) < 6
    monkeypatch.undo()
    assert [h.id for h in kb.search(q, k=10, weights=off).hits] == [h.id for h in before]
