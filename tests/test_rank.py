"""Ranking in isolation: priors, concept-law hints, named-law boost, section diversity."""

from __future__ import annotations

from dataclasses import replace

from kb.search import Tags, Weights, _hint_match, diversify, fuse, rank


def _tags(**laws):
    return {int(k[1:]): Tags(v, {}, "law_text", "en") for k, v in laws.items()}


def test_fuse_is_weighted_reciprocal_rank_and_can_go_on_from_earlier_lists():
    w = Weights()
    lexical, dense = ([3, 1], 1.0), ([1, 2], 0.5)
    k = w.rrf_k
    assert fuse([lexical, dense], w) == {3: 1 / (k + 1), 1: 1 / (k + 2) + 0.5 / (k + 1), 2: 0.5 / (k + 2)}
    # lexical lists fused while the model runs, dense ones after: the very same scores
    assert fuse([dense], w, fuse([lexical], w)) == fuse([lexical, dense], w)
    assert fuse([([5], 0.0)], w) == {}


def test_hint_match_levels():
    assert _hint_match("64B2", "64B") == 1.0 and _hint_match("64B", "64B2") == 1.0
    assert _hint_match("64A1", "64B") == 0.5 and _hint_match("64A1", "64") == 1.0
    assert _hint_match("45C", "64B") == 0.0


def test_concept_laws_lift_the_hinted_section():
    tags = _tags(r1=["45C4a"], r2=["64B2"])
    cands = {1: 0.0105, 2: 0.0100}
    w = replace(Weights(), diversity=1.0)
    assert [r for r, _ in rank(cands, tags, [], w)] == [1, 2]
    assert [r for r, _ in rank(cands, tags, [], w, hints={"64B": 1.0})] == [2, 1]
    assert [r for r, _ in rank(cands, tags, [], replace(w, concept_laws=0.0), hints={"64B": 1.0})] == [1, 2]


def test_a_weaker_hint_lifts_less():
    tags = _tags(r1=["45C4a"], r2=["64B2"], r3=["46B2"])
    cands = {1: 0.0105, 2: 0.0100, 3: 0.0100}
    w = replace(Weights(), diversity=1.0)
    assert [r for r, _ in rank(cands, tags, [], w, hints={"64B": 1.0, "46B": 0.5})] == [2, 3, 1]
    assert [r for r, _ in rank(cands, tags, [], w, hints={"64B": 0.1, "46B": 1.0})] == [3, 1, 2]


def test_a_story_in_one_phase_lowers_passages_wholly_about_the_other():
    """A story told in the auction ranks the play's laws (41-72) lower, and the other way round; a passage
    with a general law (16, 12) among its laws, or no phase told, is left alone."""
    tags = _tags(r1=["47E2"], r2=["21B"], r3=["16C", "47E"])
    cands = {1: 0.0110, 2: 0.0100, 3: 0.0095}
    w = replace(Weights(), diversity=1.0)
    assert [r for r, _ in rank(cands, tags, [], w)] == [1, 2, 3]
    assert [r for r, _ in rank(cands, tags, [], w, phase="auction")] == [2, 3, 1]
    assert [r for r, _ in rank(cands, tags, [], w, phase="play")] == [1, 3, 2]
    assert [r for r, _ in rank(cands, tags, [], replace(w, phase=1.0), phase="auction")] == [1, 2, 3]


def test_named_law_comes_first():
    tags = _tags(r1=["45C4a"], r2=["46B2"])
    cands = {1: 0.02, 2: 0.01}
    assert rank(cands, tags, ["46B"], Weights())[0][0] == 2


def test_a_law_cited_inside_a_story_is_evidence_not_the_answer():
    """'Isn't this a Law 50 penalty card?': the passages the story's own words found still rank above
    every passage of the cited law when they are far ahead; a near-tie goes to the cited law. A query
    that is nothing but the address still puts that law first whatever else scores."""
    w = replace(Weights(), diversity=1.0)
    unit = 1 / (w.rrf_k + 1)
    tags = _tags(r1=["48A"], r2=["50B"], r3=["50C"], r4=["50D"])
    strong = {1: 10 * unit, 2: 0.1 * unit, 3: 0.1 * unit, 4: 0.1 * unit}
    assert rank(strong, tags, ["50"], w, law_only=False)[0][0] == 1
    close = {1: 1.0 * unit, 2: 0.5 * unit, 3: 0.1 * unit, 4: 0.1 * unit}
    assert rank(close, tags, ["50"], w, law_only=False)[0][0] == 2
    assert [r for r, _ in rank(strong, tags, ["50"], w, law_only=True)][:3] == [2, 3, 4]


def test_diversify_spreads_sections_and_keeps_everything():
    tags = _tags(r1=["45C1"], r2=["45C2"], r3=["46B"], r4=["45C4"])
    scored = [(1, 1.0), (2, 0.95), (4, 0.9), (3, 0.8)]
    out = diversify(scored, tags, 0.8)
    assert [r for r, _ in out][:2] == [1, 3]  # the second 45C passage (0.95 × 0.8) yields to 46B
    assert sorted(r for r, _ in out) == [1, 2, 3, 4]
    tail = diversify(scored, tags, 0.8, depth=1)
    assert [r for r, _ in tail] == [1, 2, 4, 3]  # past `depth` the order is kept


def test_dense_query_drops_cards_and_what_did_not_happen():
    import numpy as np

    from kb.search import dense_queries

    seen: list[str] = []

    def encode(texts):
        seen.extend(texts)
        return np.ones((len(texts), 4), np.float32)

    dense_queries("In 4♠ East ruffed the ♣4 with the ♠7; there was no revoke.", "en",
                  replace(Weights(), dense_target=0.0), encode)
    assert seen == ["In ruffed the with the there was no ."]
    seen.clear()
    dense_queries("♠ ♥", "en", replace(Weights(), dense_target=0.0), encode)
    assert seen == ["♠ ♥"], "nothing but symbols: the question as typed"


def test_named_law_as_primary_tag_ranks_above_a_secondary_mention():
    tags = {1: Tags(["47C", "45C4b"], {}, "commentary", "en"), 2: Tags(["45C4b"], {}, "law_text", "en")}
    cands = {1: 0.02, 2: 0.015}
    assert [r for r, _ in rank(cands, tags, ["45C4b"], Weights())][0] == 2


def test_dense_candidates_use_one_thread_for_a_small_index_and_every_core_for_a_large_one():
    import faiss
    import numpy as np

    from kb.search import dense_candidates
    from kb.store import HNSW_ABOVE, cores

    rng = np.random.default_rng(0)
    q = rng.standard_normal((2, 8)).astype(np.float32)
    for n, threads in ((50, 1), (HNSW_ABOVE, cores())):
        index = faiss.IndexFlatIP(8)
        index.add(rng.standard_normal((n, 8)).astype(np.float32))
        faiss.omp_set_num_threads(3)  # whatever an earlier build or search left
        found = dense_candidates(index, q, 5)
        assert faiss.omp_get_max_threads() == threads
        assert [len(f) for f in found] == [5, 5]
        assert found[0][0] == int(np.argmax(index.reconstruct_n(0, n) @ q[0]))


def test_a_question_in_capitals_is_read_in_lower_case_by_the_model():
    from kb.search import dense_text, shouting

    assert shouting("Ο ΑΝΑΤΟΛΙΚΟΣ ΕΙΠΕ ΠΑΣΟ ΠΡΩΤΟΣ. ΤΙ ΓΙΝΕΤΑΙ;")
    assert not shouting("LAW 45C4B: declarer called the king from dummy, then said the queen")
    assert not shouting("OK")  # too short to tell
    text = dense_text("DECLARER CALLED THE KING FROM DUMMY, THEN SAID 'NO, THE QUEEN'")
    assert text == text.lower() and "declarer called the king" in text
    assert "εκτελεστής" in dense_text("Ο ΕΚΤΕΛΕΣΤΗΣ ΕΚΑΝΕ ΡΕΝΟΝΣ ΣΤΗ ΛΕΒΕ 5")  # lower case, then accents


def test_a_snippet_with_nothing_to_mark_is_the_passages_beginning_without_its_deal():
    from kb.search import snippet

    text = "♠ AKQ\n♥ 432\nDeclarer   called\nfor the king " + "and then the queen " * 40
    out = snippet(text, set(), "en")
    assert out.startswith("Declarer called for the king and then") and "♠" not in out and "**" not in out
    assert out.endswith("…") and len(out) <= 261 and not out[:-1].endswith(" ")
    assert snippet("short text", set(), "en") == "short text" and snippet("", set(), "en") == ""
    assert snippet(text, {"queen"}, "en").count("**queen**") >= 2  # with words to mark, they are marked
