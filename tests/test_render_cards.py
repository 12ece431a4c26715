"""The app's HTML fragments: result cards, law chips, breadcrumbs, snippets, worked examples."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from hypothesis import given, settings
from hypothesis import strategies as st

from kb.render import (
    breadcrumbs_html,
    example_html,
    hit_card_html,
    law_chip,
    narrative,
    snippet_html,
    source_line,
    text_html,
)
from kb.search import AlsoIn, Hit

VOID = {"br", "img", "hr", "input", "meta", "link", "wbr"}


class _Tags(HTMLParser):
    """Checks nesting and collects links, classes and styles."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.links: list[tuple[str, str]] = []  # (href, text)
        self.styles: list[str] = []
        self.classes: list[str] = []
        self._href: str | None = None
        self._text = ""
        self.text = ""

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("style"):
            self.styles.append(a["style"])
        if a.get("class"):
            self.classes += a["class"].split()
        if tag == "a":
            self._href, self._text = a.get("href"), ""
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"unexpected </{tag}> (open: {self.stack})")
            return
        self.stack.pop()
        if tag == "a":
            self.links.append((self._href or "", self._text))
            self._href = None

    def handle_data(self, data):
        self.text += data
        if self._href is not None:
            self._text += data


def parse(html: str) -> _Tags:
    p = _Tags()
    p.feed(html)
    p.close()
    assert not p.errors, p.errors
    assert not p.stack, f"unclosed tags: {p.stack}"
    return p


def hit(**kw) -> Hit:
    base = dict(id="abc", doc="en_workshop.pdf", page=4, page_end=None, lang="en", kind="law_text",
                title="LAW 45 – CARD PLAYED · 45C4b", laws=["45C4b"], cites=["47D"], inferred={}, score=1.0,
                text="(b) Until his partner has played a card a player may change an unintended designation.",
                snippet="a player may **change** an **unintended** designation",
                also_in=[AlsoIn("it", "it_lezione.txt", 1, "x1", "45C4b"), AlsoIn("el", "el.pdf", 2, "x2", "45C4")])
    base.update(kw)
    return Hit(**base)


def test_card_shows_title_badges_chips_snippet_source_and_other_languages():
    html = hit_card_html(hit())
    p = parse(html)
    assert "LAW 45 – CARD PLAYED · 45C4b" in p.text
    assert 'data-kind="law_text"' in html and "law text" in p.text
    assert 'class="hit-lang" data-lang="en"' in html and "EN" in p.text
    assert ("?law=45C4b", "45C4b") in p.links
    assert ("?law=47D", "47D") in p.links  # the cited law, as a minor chip
    assert "<mark" in html and ">change</mark>" in html and ">unintended</mark>" in html and "**" not in html
    assert "en_workshop.pdf · p. 4" in p.text
    also = html[html.index("hit-also"):]
    assert "also in:" in also
    assert ("?law=45C4b", "IT p.1") in p.links and ("?law=45C4", "EL p.2") in p.links
    assert re.search(r"IT p\.1</a> · <a", also)


def test_card_page_ranges_titles_and_link_base():
    html = hit_card_html(hit(page=3, page_end=4, also_in=[]), link_base="/app", doc_title="Workshop Örebro")
    p = parse(html)
    assert "Workshop Örebro · p. 3–4" in p.text
    assert 'title="en_workshop.pdf"' in html
    assert ("/app?law=45C4b", "45C4b") in p.links
    assert "also in" not in html
    assert source_line("d.txt", 3, 3) == "d.txt · p. 3"
    assert source_line("d.txt", 0) == "d.txt"


def test_card_full_text_keeps_line_breaks_on_one_html_line():
    html = hit_card_html(hit(text="first line\nsecond ♥ line\n\nthird"), full_text=True)
    assert "first line<br>second" in html and "\n" not in html  # no blank line: markdown leaves it alone
    assert 'color:#c00">♥</span>' in html


def test_untagged_card_shows_inferred_laws_as_minor_chips():
    html = hit_card_html(hit(laws=[], cites=[], inferred={"46B": 0.7}))
    assert "probably" in html and 'class="law-chip minor"' in html and "?law=46B" in html


def test_everything_is_escaped():
    evil = "<script>alert(1)</script>"
    html = hit_card_html(hit(title=evil, doc='x"><img src=x onerror=alert(1)>.pdf', snippet=f"**{evil}** & more",
                             text=evil, laws=['45"><b>'], cites=[], lang="<i>", kind="<u>",
                             also_in=[AlsoIn("<b>", "<d>", 1, "i", '"><x')]))
    assert "<script" not in html and "<img" not in html and "<i>" not in html and "<u>" not in html
    assert "&lt;script&gt;" in html and "&amp; more" in html
    parse(html)
    html = hit_card_html(hit(text=evil), full_text=True)
    assert "<script" not in html
    assert "<script" not in law_chip('"><script>')
    assert "<script" not in breadcrumbs_html(["<script>"], "<script>")


def test_usable_on_a_phone():
    h = hit(title="W" * 300, snippet="x" * 500, doc="y" * 200 + ".pdf")
    for html in (hit_card_html(h), hit_card_html(h, full_text=True), law_chip("45C4b"),
                 breadcrumbs_html(["45", "45C"], "45C4"), example_html(_example())):
        p = parse(html)
        for style in p.styles:
            for value in re.findall(r"(\d+(?:\.\d+)?)px", style):
                assert float(value) <= 360, style
            for value in re.findall(r"(?<![-\w])(?:min-)?width:\s*(\d+(?:\.\d+)?)em", style):
                assert float(value) * 16 <= 360, style  # a fixed width fits a 390 px phone
        assert "<script" not in html and "onclick" not in html and "\n" not in html
    card = hit_card_html(h)
    assert "overflow-wrap:anywhere" in card and "max-width:100%" in card and "box-sizing:border-box" in card


def test_law_chip():
    html = law_chip("45C4b")
    p = parse(html)
    assert p.links == [("?law=45C4b", "45C4b")]
    assert 'target="_self"' in html and "law-chip" in p.classes
    assert law_chip("46", label="Law 46").endswith(">Law 46</a>")
    assert "minor" in law_chip("47D", minor=True)
    assert "?law=45%CE%93" in law_chip("45Γ")  # quoted in the URL


def test_breadcrumbs_each_level_a_link_in_order():
    html = breadcrumbs_html(["45", "45C", "45C4"], "45C4b")
    p = parse(html)
    assert p.links == [("?law=45", "45"), ("?law=45C", "45C"), ("?law=45C4", "45C4"), ("?law=45C4b", "45C4b")]
    assert html.count('aria-current="page"') == 1
    assert html.index('aria-current="page"') > html.index("?law=45C4\"")
    assert parse(breadcrumbs_html([], "45")).links == [("?law=45", "45")]


def test_snippet_marks_escapes_and_leaves_function_words_plain():
    out = snippet_html("**declarer** **calls** **the** <b> & **Jack** ♦9 **του** **ζητά**")
    assert out.count("<mark") == 4
    assert ">declarer</mark>" in out and ">Jack</mark>" in out and ">ζητά</mark>" in out
    assert " the " in out and "του" in out and ">the</mark>" not in out
    assert "&lt;b&gt; &amp;" in out
    assert 'color:#c00">♦</span>9' in out
    assert snippet_html("a ** stray") == "a  stray"
    assert snippet_html("") == ""


def test_text_html():
    assert text_html("a\r\nb <c>\n") == "a<br>b &lt;c&gt;"


DEAL = {"north": {"spades": "KT9", "hearts": "Q2", "diamonds": "QJT65", "clubs": "QJ7"},
        "east": {"spades": "84", "hearts": "AT983", "diamonds": "A932", "clubs": "T2"},
        "south": {"spades": "A765", "hearts": "KJ65", "diamonds": "K87", "clubs": "A4"},
        "west": {"spades": "QJ32", "hearts": "74", "diamonds": "4", "clubs": "K98653"},
        "dealer": "N", "vulnerability": "EW", "contract": "3NT"}

EXAMPLE_TEXT = """1
BOARD 9
♠ K109
♥ Q2
N
♠ QJ32            ♠ 84
♥ 74    W    E    ♥ A10983
S
Play
♣5    ♣J    ♣2    ♣4
Now the Declarer calls "Diamond!"."""


def _example(**kw) -> Hit:
    base = dict(kind="example", title="LAW 46 · example 1", laws=["46B2"], cites=["45C2"], example_no="1",
                deal=DEAL, question="Declarer says <diamond>. Ruling?", answer="He plays a small ♦ (46B2).",
                text=EXAMPLE_TEXT, page=10, page_end=11, also_in=[])
    base.update(kw)
    return hit(**base)


def test_example_with_deal_question_and_answer():
    html = example_html(_example(), doc_title="Workshop")
    p = parse(html)
    assert "deal-grid" in html and 'data-seat="north"' in html and "Dealer" in html and "3NT" in html
    assert 'background:#fff' in html  # a light panel: black suits stay readable on any theme
    assert "Example 1" in p.text and "Question" in p.text and "Answer" in p.text
    assert "&lt;diamond&gt;" in html
    assert ("?law=46B2", "46B2") in p.links and ("?law=45C2", "45C2") in p.links
    assert "Workshop · p. 10–11" in p.text
    assert html.index("deal-grid") < html.index("ex-question") < html.index("ex-answer")
    assert "flex-wrap:wrap" in html  # the deal beside the words on a wide screen, above them on a phone


def test_example_without_question_shows_its_story_without_the_diagram():
    html = example_html(_example(question=None, answer=None))
    story = html[html.index("ex-text"):]
    assert "BOARD 9" in story and "Diamond!" in story
    assert "K109" not in story and "A10983" not in story  # drawn, not repeated
    assert "♣</span>" not in story or "J" in story
    assert narrative(EXAMPLE_TEXT).splitlines() == ["BOARD 9", "Play", "♣5    ♣J    ♣2    ♣4",
                                                    'Now the Declarer calls "Diamond!".']
    no_deal = example_html(_example(deal=None, question=None, answer=None, text="3\n- A) South ♠ is declarer"))
    assert "deal-grid" not in no_deal and ">3<" not in no_deal and "South" in no_deal


_text = st.text(alphabet=st.characters(codec="utf-8", categories=["L", "N", "P", "S", "Z", "Cc"]), max_size=80)


@settings(max_examples=150, deadline=None)
@given(title=_text, snippet=_text, doc=_text, text=_text, law=_text, lang=_text)
def test_render_anything(title, snippet, doc, text, law, lang):
    h = hit(title=title, snippet=snippet, doc=doc, text=text, laws=[law], cites=[law + "x"], lang=lang,
            also_in=[AlsoIn(lang, doc, 1, "i", law)])
    for html in (hit_card_html(h), hit_card_html(h, full_text=True), example_html(h)):
        p = parse(html)
        assert "<script" not in html.lower().replace("&lt;script", "")
        assert "\n" not in html
        assert all(t in ("div", "span", "a", "b", "mark", "br", "nav") for t in re.findall(r"<(\w+)", html)), html
        assert p.links


def test_card_lists_where_else_the_same_text_stands():
    html = hit_card_html(hit(same_text=[AlsoIn("en", "en_workshop.pdf", 9, "c1", "45C4b"),
                                        AlsoIn("en", "other.pdf", 2, "c2", "45C4b")]))
    p = parse(html)
    assert "the same text also on p. 9 · other.pdf p. 2" in p.text
    assert 'class="same-text"' not in hit_card_html(hit())
