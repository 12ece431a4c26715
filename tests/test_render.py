"""How a deal is shown: positions, colours, tens, voids, escaping, missing seats."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.model import Deal, Hand
from kb.render import deal_html, deal_text, record_html

DEAL = Deal(
    north=Hand("KJ852", "QT864", "Q", "32"),
    west=Hand("93", "KJ72", "8762", "K96"),
    east=Hand("A764", "A93", "KJ5", "JT4"),
    south=Hand("QT", "5", "AT943", "AQ875"),
    dealer="E",
    vulnerability="NS",
    contract="2S",
)


class _Cells(HTMLParser):
    """The direct children of the grid, in document order: ('seat' or 'compass' or 'empty')."""

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0
        self.grid_depth: int | None = None
        self.cells: list[str] = []
        self.styles: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.depth += 1
        if a.get("style"):
            self.styles.append(a["style"])
        cls = a.get("class") or ""
        if "deal-grid" in cls:
            self.grid_depth = self.depth
        elif self.grid_depth is not None and self.depth == self.grid_depth + 1:
            if a.get("data-seat"):
                self.cells.append(a["data-seat"])
            elif "deal-compass" in cls:
                self.cells.append("compass")
            else:
                self.cells.append("empty")

    def handle_endtag(self, tag):
        if self.grid_depth is not None and self.depth == self.grid_depth:
            self.grid_depth = None
        self.depth -= 1


def cells(html: str) -> _Cells:
    p = _Cells()
    p.feed(html)
    return p


def test_grid_order_north_top_west_left_east_right_south_bottom():
    html = deal_html(DEAL)
    p = cells(html)
    # a 3×3 grid read row by row
    assert p.cells == ["empty", "north", "empty", "west", "compass", "east", "empty", "south", "empty"]
    assert "grid-template-columns:repeat(3" in html
    # the hands are where they belong and their lines are in suit order
    north = html[html.index('data-seat="north"'):html.index('data-seat="west"')]
    assert [m for m in re.findall("[♠♥♦♣]", north)] == ["♠", "♥", "♦", "♣"]
    assert "KJ852" in north and "Q10864" in north
    assert html.index("A764") > html.index('data-seat="east"') > html.index('data-seat="west"')
    assert html.index("AQ875") > html.index('data-seat="south"')


def test_suit_colours_tens_and_voids():
    html = deal_html(Deal(north=Hand("AT2", "", "T", "KQ")))
    assert re.search(r'color:#c00">♥<', html) and re.search(r'color:#c00">♦<', html)
    assert re.search(r'color:#000">♠<', html) and re.search(r'color:#000">♣<', html)
    assert "A102" in html and ">10<" in html
    assert "T" not in re.sub(r"<[^>]*>", "", html).replace("Contract", "")
    assert "—" in html  # the heart void


def test_compass_dealer_and_vulnerability():
    html = deal_html(DEAL)
    compass = html[html.index("deal-compass"):html.index('data-seat="east"')]
    for letter in "NESW":
        assert f'data-compass="{letter}"' in compass
    east = re.search(r'<span class="([^"]*)" data-compass="E"', compass).group(1)
    assert "dealer" in east
    north = re.search(r'<span class="([^"]*)" data-compass="N"[^>]*style="([^"]*)"', compass)
    assert "vulnerable" in north.group(1) and "#c00" in north.group(2)
    west = re.search(r'<span class="([^"]*)" data-compass="W"[^>]*style="([^"]*)"', compass)
    assert "vulnerable" not in west.group(1) and "#c00" not in west.group(2)
    # the line above the grid
    meta = html[html.index("deal-meta"):html.index("deal-grid")]
    assert "Contract" in meta and "♠" in meta and "Dealer" in meta and "NS" in meta


def test_missing_seats_leave_empty_cells():
    deal = Deal(north=Hand("AK", "", "", ""), south=Hand("", "Q", "", ""))
    html = deal_html(deal)
    p = cells(html)
    assert p.cells == ["empty", "north", "empty", "west", "compass", "east", "empty", "south", "empty"]
    west = html[html.index('data-seat="west"'):html.index("deal-compass")]
    assert "♠" not in west
    assert "deal-meta" not in html  # nothing known: no line above
    assert deal_html(Deal()).count("data-seat") == 4


def test_everything_is_escaped():
    evil = Deal(north=Hand("<script>", 'A"K', "&", "Q'"), dealer="<b>", vulnerability="<i>",
                contract="<img src=x onerror=alert(1)>")
    html = deal_html(evil)
    assert "<script>" not in html and "<img" not in html and "<i>" not in html
    assert "&lt;script&gt;" in html and "&lt;img" in html and "&amp;" in html
    assert "<b>&lt;b&gt;</b>" in html


def test_usable_on_a_phone():
    html = deal_html(DEAL)
    assert "max-width:22em" in html
    for style in cells(html).styles:
        for value in re.findall(r"(\d+(?:\.\d+)?)px", style):
            assert float(value) <= 360
    assert "<script" not in html and "onclick" not in html


def test_text_layout():
    text = deal_text(DEAL)
    rows = text.split("\n")
    assert rows[0] == "Contract 2♠  Dealer E  Vul NS"
    body = rows[1:]
    assert len(body) == 12
    north_col = body[0].index("♠")
    assert north_col > 0
    assert [r[north_col] for r in body[0:4]] == ["♠", "♥", "♦", "♣"]
    assert body[1].strip() == "♥ Q10864"
    # West at the left margin, East to the right of North's column, compass in between
    assert [r[0] for r in body[4:8]] == ["♠", "♥", "♦", "♣"]
    east_col = body[4].rindex("♠")
    assert east_col > north_col
    assert body[4].endswith("♠ A764") and body[7].endswith("♣ J104")
    assert "N" in body[4][north_col - 2:east_col] and "[E]" in body[5]
    assert body[5].index("W") < body[5].index("[E]") < east_col
    assert [r[north_col] for r in body[8:12]] == ["♠", "♥", "♦", "♣"]
    assert body[8].strip() == "♠ Q10" and body[10].strip() == "♦ A10943"


def test_text_missing_seats_and_voids():
    text = deal_text(Deal(east=Hand("", "Q", "T", "")))
    assert "Contract" not in text
    rows = text.split("\n")
    assert any(r.endswith("♥ Q") for r in rows) and any(r.endswith("♦ 10") for r in rows)
    assert any(r.endswith("♠ —") for r in rows) and any(r.endswith("♣ —") for r in rows)
    assert not any(r.startswith("♠") for r in rows)  # no West, no North or South


_hand = st.builds(Hand, *(st.text(alphabet="AKQJT98765432x<&\"'", max_size=13) for _ in range(4)))


@settings(max_examples=100, deadline=None)
@given(st.builds(Deal, north=st.none() | _hand, east=st.none() | _hand, south=st.none() | _hand,
                 west=st.none() | _hand, dealer=st.none() | st.text(max_size=3),
                 vulnerability=st.none() | st.text(max_size=5), contract=st.none() | st.text(max_size=6)))
def test_render_anything(deal):
    html = deal_html(deal)
    assert cells(html).cells == ["empty", "north", "empty", "west", "compass", "east", "empty", "south", "empty"]
    assert "<script" not in html
    assert isinstance(deal_text(deal), str)


def test_record_html_escapes_clips_and_colours_red_suits():
    h = record_html(["Auction: 1♥ <X> 2♣", "x" * 200])
    assert "&lt;X&gt;" in h and '<span style="color:#c00">♥</span>' in h and "2♣" in h
    assert "x" * 79 + "…" in h and "x" * 80 not in h
    both = record_html(["Board 3"], ["I was the TD."])
    assert "the board's record: Board 3" in both and "framing: I was the TD." in both


def test_same_text_line_gives_pages_of_the_hits_document_bare_and_names_others():
    from types import SimpleNamespace as NS

    from kb.render import same_text_line

    hit = NS(doc="lecture.pdf", page=4, page_end=None)
    copies = [NS(doc="lecture.pdf", page=9, page_end=10), NS(doc="lecture.pdf", page=5, page_end=None),
              NS(doc="book.pdf", page=2, page_end=None)]  # in the order a search met them
    line = same_text_line(hit, copies, {"book.pdf": "The Laws book"})
    assert line == "the same text also on p. 5, p. 9–10 · The Laws book p. 2"
    assert same_text_line(hit, []) == ""


def test_a_pipe_table_in_a_passage_is_drawn_as_a_table():
    from kb.render import text_html

    text = ("5. Must he play that card?\n- | | | |\n|----|------|-----|\n| 1) | 45C2 | Not played. |\n"
            "| 2) | 45C1 | <Played> ♥K |\nAfter the table.")
    out = text_html(text)
    assert "\n" not in out and out.count("<table") == 1
    assert out.count("<tr>") == 2 and "<th" not in out  # the empty header row is left out
    assert "<td" in out and "&lt;Played&gt;" in out and "color:#c00" in out
    assert out.startswith("5. Must he play that card?<table") and out.endswith("</table>After the table.")
    named = text_html("| case | ruling |\n|---|---|\n| 1 | played |")
    assert named.count("<th") == 2 and named.count("<tr>") == 2


def test_a_lone_pipe_line_stays_text():
    from kb.render import text_html

    assert text_html("a | b |\n| one row only |\nend") == "a | b |<br>| one row only |<br>end"
