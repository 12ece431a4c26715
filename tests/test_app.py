"""The Streamlit app, run headless with AppTest against the knowledge base of the default corpus."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from kb import KnowledgeBase
from kb.library import ingest_upload
from kb.store import current_generation

APP = Path(__file__).resolve().parents[1] / "app.py"
QUERY = "declarer called the jack from dummy, then said oops, the king"
pytestmark = pytest.mark.slow


@pytest.fixture
def kb_env(built_kb, monkeypatch):
    monkeypatch.setenv("KB_DIR", str(built_kb))
    return built_kb


def run_app(**query) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=120)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    ok(at)
    return at


def ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def cards(at: AppTest) -> list[str]:
    return [m.value for m in at.markdown if 'class="hit-card"' in m.value]


def attr(html: str, name: str) -> str:
    return re.search(rf'{name}="([^"]*)"', html).group(1)


def test_search_returns_cards_with_law_chips_and_sources(kb_env):
    at = run_app(q=QUERY)
    found = cards(at)
    assert len(found) >= 3
    assert all('class="law-chip"' in c for c in found[:3])
    assert any(re.search(r'data-law="45C4[ab]?"', c) for c in found)
    assert all(re.search(r'class="hit-source"[^>]*>[^<]* · p\. \d', c) for c in found)
    assert any("Query language" in c.value and "EN" in c.value for c in at.caption)
    assert at.title[0].value == "What happened at the table?"


def test_a_board_record_in_the_question_is_shown_as_not_searched(kb_env):
    at = run_app(q="Board 14, dealer East, N/S vulnerable.\nAuction: 1♣ – 1♥ – X – all pass.\n" + QUERY)
    note = [m.value for m in at.markdown if 'class="record-note"' in m.value]
    assert len(note) == 1 and "Board 14" in note[0] and "dealer East" in note[0]
    assert cards(at)
    assert not [m for m in run_app(q=QUERY).markdown if 'class="record-note"' in m.value]


def test_typing_a_situation_searches_and_updates_the_url(kb_env):
    at = run_app()
    assert not cards(at)
    box = at.text_input(key="q")
    assert "jack" in box.placeholder
    assert "il morto" in box.help and "αμυνόμενος" in box.help
    box.input("il morto ha giocato una carta non nominata dal dichiarante").run()
    ok(at)
    assert cards(at)
    assert at.query_params["q"] == "il morto ha giocato una carta non nominata dal dichiarante"
    assert any("IT" in c.value for c in at.caption)


def test_language_and_kind_filters_change_the_results(kb_env):
    at = run_app(q=QUERY)
    before = [attr(c, "data-lang") for c in cards(at)]
    assert "en" in before
    at.multiselect(key="f_lang").select("it").run()
    ok(at)
    after = [attr(c, "data-lang") for c in cards(at)]
    assert after and set(after) == {"it"} and after != before
    assert at.query_params["lang"] == "it"
    at.multiselect(key="f_kind").select("example").run()
    ok(at)
    kinds = {attr(c, "data-kind") for c in cards(at)}
    assert kinds == {"example"}


def test_law_filter_keeps_passages_under_that_law(kb_env):
    at = run_app(q=QUERY)
    at.text_input(key="f_under").input("46").run()
    ok(at)
    found = cards(at)
    assert found and all(re.search(r'class="law-chip" href="\?law=46', c) for c in found)
    at.text_input(key="f_under").input("nonsense").run()
    ok(at)
    assert any("not a law address" in w.value for w in at.warning)
    assert cards(at)  # ignored, not an empty page


@pytest.mark.parametrize("query, law", [("46B2", "46B2"), ("art. 45 C 4 b", "45C4b"), ("Νόμος 45ΣΤ", "45F")])
def test_a_law_address_query_opens_the_law_page(kb_env, query, law):
    at = run_app()
    at.text_input(key="q").input(query).run()
    ok(at)
    assert at.title[0].value == f"Law {law}"
    assert dict(at.query_params) == {"law": law}
    deep = run_app(q=query)  # the same from a link
    assert deep.title[0].value == f"Law {law}"


def test_law_page_side_by_side_per_language(kb_env):
    at = run_app(law="45C4b")
    assert at.title[0].value == "Law 45C4b"
    crumbs = next(m.value for m in at.markdown if "law-crumbs" in m.value)
    assert re.findall(r'href="\?law=([^"]+)"', crumbs) == ["45", "45C", "45C4", "45C4b"]
    heads = []
    for col in at.columns:
        for m in col.markdown:
            if "lang-col-head" in m.value:
                heads.append(attr(m.value, "data-lang"))
                assert any('class="hit-card"' in x.value for x in col.markdown)
    assert len(heads) >= 2 and {"it", "en"} <= set(heads)
    assert heads.index("it") < heads.index("en")
    # law text first, then commentary, within a column
    for col in at.columns:
        kinds = [attr(m.value, "data-kind") for m in col.markdown if 'class="hit-card"' in m.value]
        order = {"law_text": 0, "example": 1, "commentary": 2}
        assert kinds == sorted(kinds, key=order.get)
    assert at.expander, "worked examples in expanders"
    assert any("deal-grid" in m.value for e in at.expander for m in e.markdown)
    assert any(s.value == "Related laws" for s in at.subheader)


def test_law_page_quoted_law_once_and_a_column_for_untagged_commentary(kb_env):
    at = run_app(law="45C1")
    heads, same = [], []
    for col in at.columns:
        for m in col.markdown:
            if "lang-col-head" in m.value:
                heads.append(attr(m.value, "data-lang"))
            if 'class="same-text"' in m.value:
                same.append(m.value)
    assert "el" in heads and "en" in heads
    el_col = next(col for col in at.columns if any('data-lang="el"' in m.value and "lang-col-head" in m.value
                                                    for m in col.markdown))
    assert any("probably" in m.value for m in el_col.markdown if 'class="hit-card"' in m.value)
    assert same and "the same text also on p. " in same[0]


def test_unknown_law_says_so(kb_env):
    at = run_app(law="99Z")
    assert [e.value for e in at.error] == ["no such law in the knowledge base: 99Z"]
    at = run_app(law="77")
    assert [e.value for e in at.error] == ["no such law in the knowledge base: 77"]


def test_examples_page_draws_deals_and_follows_the_tree(kb_env):
    at = run_app(examples="46")
    examples = [m.value for m in at.markdown if 'class="example-card"' in m.value]
    assert len(examples) >= 3
    assert sum("deal-grid" in e for e in examples) >= 2
    deal = next(e for e in examples if "deal-grid" in e)
    assert 'color:#c00">♥<' in deal and 'data-seat="north"' in deal
    assert at.selectbox(key="ex_law").value == "46"
    at.selectbox(key="ex_sub").select("46B2").run()
    ok(at)
    narrower = [m.value for m in at.markdown if 'class="example-card"' in m.value]
    assert 0 < len(narrower) <= len(examples)
    assert all('data-law="46B2' in e for e in narrower)
    assert at.query_params["examples"] == "46B2"


def test_nav_and_library_page(kb_env):
    at = run_app(page="library")
    nav = next(m.value for m in at.markdown if "app-nav" in m.value)
    assert re.findall(r'data-page="(\w+)"', nav) == ["search", "law", "examples", "library"]
    assert 'data-page="library" aria-current="page"' in nav
    table = at.dataframe[0].value
    assert len(table) == 5 and {"title", "year", "languages", "laws edition", "pages", "passages"} <= set(table)
    assert "EL, EN" in set(table["languages"])
    law_index = run_app(page="law")
    assert law_index.text_input(key="law_input")
    law_index.text_input(key="law_input").input("Νόμος 46Β2").run()
    ok(law_index)
    assert law_index.title[0].value == "Law 46B2"


def _private_copy(built_kb: Path, corpus_copy: Path, tmp_path: Path) -> tuple[Path, Path]:
    kb_dir, corpus = tmp_path / "kb", tmp_path / "corpus"
    shutil.copytree(built_kb, kb_dir)
    shutil.copytree(corpus_copy, corpus)
    return kb_dir, corpus


def test_corrupt_upload_shows_an_error_and_leaves_the_index_unchanged(built_kb, corpus_copy, tmp_path,
                                                                      monkeypatch):
    kb_dir, corpus = _private_copy(built_kb, corpus_copy, tmp_path)
    monkeypatch.setenv("KB_DIR", str(kb_dir))
    monkeypatch.setenv("CORPUS_DIR", str(corpus))
    gen = current_generation(kb_dir)
    passages = KnowledgeBase.open(kb_dir).stats().passages
    files = sorted(p.name for p in corpus.iterdir())
    for name, data in (("scan.pdf", os.urandom(20_000)), ("damaged.pdf", b"%PDF-1.7\n" + os.urandom(20_000)),
                       ("notes.txt", b"\x00\x01" * 1000)):
        res = ingest_upload(kb_dir, corpus, name, data)
        assert not res.ok and res.status == "failed"
        assert res.message.startswith(name) and res.message.rstrip().endswith(".")
        assert current_generation(kb_dir) == gen
        assert KnowledgeBase.open(kb_dir).stats().passages == passages
        assert sorted(p.name for p in corpus.iterdir()) == files
    at = run_app(page="library")
    assert len(at.dataframe[0].value) == 5


def test_good_upload_is_indexed_and_nothing_is_lost(built_kb, corpus_copy, tmp_path, monkeypatch):
    kb_dir, corpus = _private_copy(built_kb, corpus_copy, tmp_path)
    monkeypatch.setenv("KB_DIR", str(kb_dir))
    monkeypatch.setenv("CORPUS_DIR", str(corpus))
    before = KnowledgeBase.open(kb_dir)
    n_before, gen = before.stats().passages, current_generation(kb_dir)
    at = run_app(page="library")  # opens (and caches) the knowledge base before the upload
    text = ("ART. 16 – INFORMAZIONI AUTORIZZATE E NON AUTORIZZATE\n\n"
            "D. Informazioni da altre fonti\n"
            "1. Quando un giocatore riceve accidentalmente informazioni non autorizzate sulla mano che sta "
            "giocando, deve avvisare immediatamente l'arbitro.\n")
    seen = []
    res = ingest_upload(kb_dir, corpus, "../Nuova lezione art 16.txt", text.encode(),
                        progress=lambda *a: seen.append(a[0]))
    assert res.ok and res.status == "ok", res.message
    assert res.path == corpus.resolve() / "Nuova_lezione_art_16.txt"
    assert {"load", "embed", "index"} <= set(seen)
    statuses = {r.path: r.status for r in res.reports}
    assert statuses["Nuova_lezione_art_16.txt"] == "ok"
    assert all(s == "unchanged" for p, s in statuses.items() if p != "Nuova_lezione_art_16.txt")
    after = KnowledgeBase.open(kb_dir)
    assert current_generation(kb_dir) != gen and after.stats().passages > n_before
    assert {d["name"] for d in before.documents()} < {d["name"] for d in after.documents()}
    at.run()  # the cached knowledge base picks up the new generation
    ok(at)
    assert len(at.dataframe[0].value) == 6
    again = ingest_upload(kb_dir, corpus, "Nuova lezione art 16.txt", text.encode())
    assert again.ok and again.status == "unchanged" and current_generation(kb_dir) == after._gen.path


def test_first_start_builds_the_knowledge_base_then_opens_it(tmp_path, monkeypatch):
    corpus, kb_dir = tmp_path / "corpus", tmp_path / "kb"
    corpus.mkdir()
    shutil.copy(Path(__file__).resolve().parents[1] / "corpus" / "it_codice-di-gara_art41.txt", corpus)
    monkeypatch.setenv("KB_DIR", str(kb_dir))
    monkeypatch.setenv("CORPUS_DIR", str(corpus))
    assert current_generation(kb_dir) is None
    at = run_app()
    gen = current_generation(kb_dir)
    assert gen is not None
    assert at.title[0].value == "What happened at the table?"
    assert not at.info and not at.get("progress")  # the progress bars are gone once it is built
    at.text_input(key="q").input("inizio del gioco, attacco").run()
    ok(at)
    assert cards(at) and all('data-law="41' in c for c in cards(at))
    run_app()
    assert current_generation(kb_dir) == gen  # later starts open it, no rebuild


def test_long_pages_show_the_first_cards_and_a_button_for_all(kb_env):
    from kb import KnowledgeBase

    total = len(KnowledgeBase.open(kb_env).examples("46"))
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.session_state["page_cards"] = 2  # what a federation's archive does to a page, on the default corpus
    at.query_params["examples"] = "46"
    at.run()
    ok(at)

    def examples_shown() -> int:
        return sum('class="example-card"' in m.value for m in at.markdown)

    show_all = [b for b in at.button if b.label.startswith("Show all ")]
    assert total > 2 and examples_shown() == 2
    assert [b.label for b in show_all] == [f"Show all {total}"]
    show_all[0].click().run()
    ok(at)
    assert examples_shown() == total and not [b for b in at.button if b.label.startswith("Show all ")]
