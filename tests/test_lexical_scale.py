"""Lexical search at scale: BM25 from build-time postings (same ranking as FTS5's bm25()), the bounded
term set that caps a query's work, and the exact law-index ranges of the per-hit lookups."""

from __future__ import annotations

import random
import sqlite3

import pytest

import kb.lexical as lexical
from ingest.model import Passage
from kb import KnowledgeBase, lawref
from kb.knowledge import _also_in, _ref_rows, _tags, _under
from kb.lexical import PostingsWriter, bm25_idf, bm25_top, bounded_terms, fts_query
from kb.search import Tags, lexical_candidates
from kb.store import GenerationWriter, current_generation

VOCAB = [f"w{i:03d}" for i in range(120)]
CONCEPTS = [f"zc{i:02d}" for i in range(30)]
LAWS = ["4", "4A", "40", "40A1", "45", "45A", "45C", "45C1", "45C10", "45C1a", "45C4b", "46B2", "47"]


def _passages(n: int, seed: int = 1) -> list[tuple[Passage, tuple[str, str]]]:
    """Passages with Zipf-like word frequencies (a few words in most passages, most words rare)."""
    rng = random.Random(seed)
    weights = [1 / (i + 1) for i in range(len(VOCAB))]
    out = []
    for i in range(n):
        words = rng.choices(VOCAB, weights, k=rng.randint(3, 40))
        concepts = rng.choices(CONCEPTS, k=rng.randint(0, 6))
        laws = rng.sample(LAWS, rng.randint(0, 2))
        inferred = {} if laws or i % 2 else {rng.choice(LAWS): 0.5}
        p = Passage(id=f"p{i}", doc=f"d{i % 7}.txt", page=1 + i // 10, page_end=None, lang=("it", "en", "el")[i % 3],
                    kind="commentary", title=f"t{i}", text=" ".join(words), laws=laws, inferred=inferred)
        out.append((p, (" ".join(words), " ".join(concepts + [lexical.law_token(x) for x in laws]))))
    return out


def _store(tmp_path, n: int = 300, seed: int = 1):
    writer = GenerationWriter(tmp_path / "kb")
    for p, terms in _passages(n, seed):
        writer.add_passage(p, terms, "")
    gen = writer.commit({"model": "", "counts": {"passages": n}})
    conn = sqlite3.connect(f"file:{gen / 'kb.sqlite'}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    return gen, conn


def _fts(conn, terms: list[str], column: str, limit: int = 100) -> list[tuple[int, float]]:
    return [(r[0], -r[1]) for r in conn.execute(
        "SELECT rowid, bm25(fts) FROM fts WHERE fts MATCH ? ORDER BY bm25(fts), rowid LIMIT ?",
        (fts_query(terms, column), limit))]


QUERIES = [(["w000", "w001", "w050", "w119"], "words"), (["w000"], "words"), (VOCAB[:70], "words"),
           (["w030", "w031", "nothing"], "words"), (["zc01", "zc02", "zl45c", "zl4"], "concepts"),
           (["zl45"], "concepts"), (["nothing"], "words")]


@pytest.mark.parametrize(("terms", "column"), QUERIES)
def test_postings_rank_like_fts5(tmp_path, terms, column):
    """Same rowids in the same order, scores equal to FTS5's bm25() within float32 rounding."""
    _, conn = _store(tmp_path)
    for limit in (5, 100, 1000):
        want = _fts(conn, terms, column, limit)
        assert lexical_candidates(conn, terms, limit, column) == [r for r, _ in want]
    n = conn.execute("SELECT docs FROM bm25_stats").fetchone()[0]
    assert n == 300
    scores: dict[int, float] = {}
    for t in terms:
        row = conn.execute("SELECT rowids, weights, df FROM bm25_postings WHERE col = ? AND term = ?",
                           (column, t)).fetchone()
        if row:
            ids = lexical.np.frombuffer(row[0], lexical.ROWID_DTYPE)
            ws = lexical.np.frombuffer(row[1], lexical.WEIGHT_DTYPE)
            for i, w in zip(ids.tolist(), ws.tolist(), strict=True):
                scores[i] = scores.get(i, 0.0) + bm25_idf(row[2], n) * w
    for rid, s in _fts(conn, terms, column, 10_000):
        assert scores[rid] == pytest.approx(s, rel=1e-6)


def test_old_generation_without_new_tables_reads_fts5_and_passages(tmp_path):
    gen, conn = _store(tmp_path)
    terms = ["w000", "w003", "w077"]
    want = lexical_candidates(conn, terms, 50, "words")
    rowids = list(range(1, 301, 3))
    tags = _tags(conn, rowids)
    passages = [p for p, _ in _passages(300)]
    assert tags == {r: Tags(passages[r - 1].laws, passages[r - 1].inferred, "commentary", passages[r - 1].lang)
                    for r in rowids}
    conn.close()
    rw = sqlite3.connect(gen / "kb.sqlite")
    rw.executescript("DROP TABLE bm25_postings; DROP TABLE bm25_stats; DROP TABLE passage_tags;")
    rw.close()
    conn = sqlite3.connect(f"file:{gen / 'kb.sqlite'}?mode=ro", uri=True)
    assert lexical_candidates(conn, terms, 50, "words") == want == [r for r, _ in _fts(conn, terms, "words", 50)]
    assert _tags(conn, rowids) == tags


def test_bounded_terms_keep_rare_drop_frequent():
    dfs = [("the", 900), ("revok", 12), ("card", 500), ("zzz", 0), ("dummi", 40), ("lead", 40)]
    # everything fits: all terms that match anything, in query order
    assert bounded_terms(dfs, budget=10_000) == ["the", "revok", "card", "dummi", "lead"]
    # over budget: the most frequent go first, the rarest stay (ties: earlier in the query first)
    assert bounded_terms(dfs, budget=600) == ["revok", "card", "dummi", "lead"]
    assert bounded_terms(dfs, budget=100) == ["revok", "dummi", "lead"]
    assert bounded_terms(dfs, budget=60) == ["revok", "dummi"]
    # at least the rarest term, even alone over budget; nothing when nothing matches
    assert bounded_terms([("the", 900), ("card", 500)], budget=10) == ["card"]
    assert bounded_terms([("zzz", 0)], budget=10) == []


def test_budget_drops_the_most_frequent_terms_of_a_search(tmp_path, monkeypatch):
    _, conn = _store(tmp_path)
    terms = ["w000", "w001", "w060", "w061"]
    dfs = dict(conn.execute("SELECT term, df FROM bm25_postings WHERE col = 'words'").fetchall())
    assert dfs["w000"] > dfs["w001"] > max(dfs["w060"], dfs["w061"])
    assert lexical_candidates(conn, terms, 100, "words") == [r for r, _ in _fts(conn, terms, "words")]
    monkeypatch.setattr(lexical, "MAX_POSTINGS", dfs["w060"] + dfs["w061"])
    got = lexical_candidates(conn, terms, 100, "words")
    assert got == [r for r, _ in _fts(conn, ["w060", "w061"], "words")]


def test_nothing_frequent_nothing_dropped_on_a_small_corpus(tmp_path):
    """A corpus the size of the default one is far below the budget: every term is read."""
    _, conn = _store(tmp_path, n=200)
    total = conn.execute("SELECT sum(df) FROM bm25_postings").fetchone()[0]
    assert total < lexical.MAX_POSTINGS
    dfs = conn.execute("SELECT term, df FROM bm25_postings WHERE col = 'words'").fetchall()
    assert bounded_terms([(t, df) for t, df in dfs]) == [t for t, _ in dfs]


def test_bm25_top_ties_by_rowid_and_idf_floor():
    ids = lexical.np.array([5, 3, 9, 1], lexical.ROWID_DTYPE).tobytes()
    ws = lexical.np.ones(4, lexical.WEIGHT_DTYPE).tobytes()
    assert bm25_top([(ids, ws, 1.0)], 3) == [1, 3, 5]
    assert bm25_top([], 3) == [] and bm25_top([(ids, ws, 1.0)], 0) == []
    assert bm25_idf(9, 10) == lexical.IDF_FLOOR and bm25_idf(1, 10) > 1


def test_postings_writer_counts_tokens_like_fts5():
    pw = PostingsWriter()
    pw.add(1, "a b a", "zc1")
    pw.add(2, "b", "")
    rows = {(c, t): df for c, t, df, _, _ in pw.rows()}
    assert rows == {("words", "a"): 1, ("words", "b"): 2, ("concepts", "zc1"): 1}
    assert (pw.docs, pw.tokens) == (2, 5)


def test_law_ranges_are_exact(tmp_path):
    """Law 4 is not 40-49, 45C1 is not 45C10: the index ranges match lawref.extends exactly."""
    _, conn = _store(tmp_path)
    tagged = conn.execute("SELECT rowid, law FROM passage_laws WHERE rel = 'law'").fetchall()
    for ref in ["4", "4A", "40", "45", "45C", "45C1", "45C10", "45C1a", "46B2", "47", "9"]:
        want = sorted({rid for rid, law in tagged if lawref.extends(law, ref)})
        assert _ref_rows(conn, [ref]) == want
        got = {r[0] for r in conn.execute("SELECT DISTINCT law FROM passage_laws "
                                          "WHERE (law = ? OR (law >= ? AND law < ?))", _under(ref))}
        assert got == {law for _, law in conn.execute("SELECT rowid, law FROM passage_laws")
                       if lawref.extends(law, ref)}
    assert _ref_rows(conn, ["45C1", "45"])[:len(_ref_rows(conn, ["45C1"]))] == _ref_rows(conn, ["45C1"])


def test_also_in_in_document_order_other_languages(tmp_path):
    _, conn = _store(tmp_path, n=400)
    rows = conn.execute("SELECT p.rowid, p.id, p.lang, p.doc, p.page, l.law FROM passage_laws l "
                        "JOIN passages p ON p.rowid = l.rowid WHERE l.rel = 'law' ORDER BY p.rowid, l.law").fetchall()
    for primary in ["4", "45", "45C", "45C1"]:
        first_law: dict[int, tuple[str, str, str]] = {}  # rowid → (id, lang, its least law under primary)
        for r in rows:
            if r["lang"] != "it" and lawref.extends(r["law"], primary) and r["rowid"] not in first_law:
                first_law[r["rowid"]] = (r["id"], r["lang"], r["law"])
        want, seen = [], set()
        for pid, lang, law in first_law.values():
            if (lang, law) not in seen:  # one per language and law: each links to that law's page
                seen.add((lang, law))
                want.append((pid, law))
        got = _also_in(conn, "it", [primary])
        assert [(a.id, a.law) for a in got] == want[:6]
        assert all(a.lang != "it" for a in got)


@pytest.mark.slow
def test_default_corpus_postings_rank_like_fts5(kb: KnowledgeBase):
    """On the real knowledge base the lexical lists of a search are FTS5's, term for term."""
    conn = kb._conn(kb._gen)
    assert current_generation(kb.kb_dir) is not None
    for q, lang in [("declarer called the jack from dummy, then said oops, the king", "en"),
                    ("il morto ha giocato una carta non nominata", "it"), ("ο αμυνόμενος έδειξε φύλλο", "el")]:
        words = lexical.query_words(q, lang)
        for terms, col in ((words, "words"), (lexical.query_concepts(q, lawref.parse_refs(q)), "concepts")):
            assert lexical_candidates(conn, terms, 100, col) == [r for r, _ in _fts(conn, terms, col)]


def test_postings_kept_between_searches_change_no_ranking(tmp_path, monkeypatch):
    """A search keeps the postings it read (and a small generation can preload them all): later searches
    rank exactly as from SQLite, and the memo empties itself past its byte budget."""
    import kb.search as search

    _, conn = _store(tmp_path)
    memo: dict = {}
    for terms, column in QUERIES * 2:
        assert lexical_candidates(conn, terms, 100, column, memo) == lexical_candidates(conn, terms, 100, column)
    assert memo[("postings", "words")] and memo["docs"] == 300
    preloaded: dict = {}
    search.preload_postings(conn, preloaded)
    assert len(preloaded[("postings", "words")]) == conn.execute(
        "SELECT count(*) FROM bm25_postings WHERE col = 'words'").fetchone()[0]
    for terms, column in QUERIES:
        assert lexical_candidates(conn, terms, 100, column, preloaded) == lexical_candidates(conn, terms, 100, column)
    monkeypatch.setattr(search, "POSTINGS_MEMO_BYTES", 1)
    small: dict = {}
    assert lexical_candidates(conn, VOCAB[:70], 100, "words", small) == lexical_candidates(conn, VOCAB[:70], 100, "words")
    assert ("postings", "words") not in small and small["bytes"] == 0
