"""Show a deal the way a bridge player expects it: North on top, West left, East right, South below.

`deal_html` gives a self-contained fragment (inline CSS, no script) that stays readable on a
390 px phone screen; `deal_text` gives the same layout in monospace for the command line.
"""

from __future__ import annotations

import re
from html import escape

from ingest.model import Deal, Hand

__all__ = ["deal_html", "deal_text", "hit_card_html", "law_chip", "breadcrumbs_html", "snippet_html",
           "deal_panel_html", "text_html", "source_line", "example_html", "narrative", "record_html"]

_SUITS = (("spades", "♠"), ("hearts", "♥"), ("diamonds", "♦"), ("clubs", "♣"))
_RED = "#c00"
_BLACK = "#000"
_SEAT_NAMES = {"north": "North", "east": "East", "south": "South", "west": "West"}
_STRAIN_SYMBOL = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
_CONTRACT = re.compile(r"([1-7])(NT|SA|N|S|H|D|C)(X{0,2})", re.IGNORECASE)
_VUL_SEATS = {"NS": "NS", "EW": "EW", "All": "NESW", "None": ""}


def _holding(ranks: object) -> str:
    """'AKT2' → 'AK102'; '' → '—' (a void)."""
    s = "" if ranks is None else str(ranks)
    return s.replace("T", "10") if s else "—"


def _suit_colour(symbol: str) -> str:
    return _RED if symbol in "♥♦" else _BLACK


def _contract_parts(contract: str) -> tuple[str, str, str] | None:
    """(level, strain symbol or 'NT', doubling) for a well-formed contract, else None."""
    m = _CONTRACT.fullmatch(contract.strip())
    if not m:
        return None
    strain = m.group(2).upper()
    strain = "NT" if strain in ("NT", "SA", "N") else _STRAIN_SYMBOL[strain]
    return m.group(1), strain, m.group(3).upper()


def _meta_parts(deal: Deal) -> list[tuple[str, str]]:
    """(label, plain value) for what is known: contract, dealer, vulnerability."""
    parts = []
    if deal.contract:
        c = _contract_parts(str(deal.contract))
        parts.append(("Contract", "".join(c) if c else str(deal.contract)))
    if deal.dealer:
        parts.append(("Dealer", str(deal.dealer)))
    if deal.vulnerability:
        parts.append(("Vul", str(deal.vulnerability)))
    return parts


# --------------------------------------------------------------------------------------------
# HTML


def _contract_html(contract: str) -> str:
    c = _contract_parts(contract)
    if c is None:
        return escape(contract)
    level, strain, dbl = c
    if strain == "NT":
        return f"{level}NT{dbl}"
    return f'{level}<span style="color:{_suit_colour(strain)}">{strain}</span>{dbl}'


def _hand_html(seat: str, hand: Hand | None) -> str:
    name = _SEAT_NAMES[seat]
    if hand is None:
        return (f'<div class="deal-cell deal-hand deal-missing" data-seat="{seat}" '
                f'aria-label="{name}: not shown"></div>')
    lines = []
    for attr, sym in _SUITS:
        lines.append(
            f'<div class="suit-line" style="overflow-wrap:anywhere">'
            f'<span class="suit" style="color:{_suit_colour(sym)}">{sym}</span>&#8239;'
            f'<span class="ranks">{escape(_holding(getattr(hand, attr, "")))}</span></div>'
        )
    return (f'<div class="deal-cell deal-hand" data-seat="{seat}" aria-label="{name}" '
            f'style="padding:0.15em 0.2em;min-width:0">{"".join(lines)}</div>')


def _compass_html(deal: Deal) -> str:
    vul_seats = _VUL_SEATS.get(str(deal.vulnerability), "") if deal.vulnerability else ""
    dealer = str(deal.dealer or "").upper()[:1]
    dealer = "W" if dealer == "O" else dealer
    place = {"N": "1 / 2", "W": "2 / 1", "E": "2 / 3", "S": "3 / 2"}
    cells = []
    for letter in "NWES":
        vul = letter in vul_seats
        is_dealer = letter == dealer
        style = [f"grid-area:{place[letter]}", "display:flex", "align-items:center",
                 "justify-content:center", "font-size:0.8em"]
        style.append(f"background:{_RED};color:#fff" if vul else "background:#f2f2f2;color:#333")
        if is_dealer:
            style.append("font-weight:bold;text-decoration:underline")
        title = []
        if is_dealer:
            title.append("dealer")
        if vul:
            title.append("vulnerable")
        attrs = f' title="{escape(", ".join(title))}"' if title else ""
        classes = "compass-seat" + (" dealer" if is_dealer else "") + (" vulnerable" if vul else "")
        cells.append(f'<span class="{classes}" data-compass="{letter}"{attrs} style="{";".join(style)}">'
                     f'{letter}</span>')
    label = []
    if dealer in place:
        label.append(f"dealer {dealer}")
    if deal.vulnerability:
        label.append(f"vulnerable: {deal.vulnerability}")
    aria = escape("compass" + (": " + ", ".join(label) if label else ""))
    return (f'<div class="deal-cell deal-compass" aria-label="{aria}" style="display:flex;'
            f'align-items:center;justify-content:center">'
            f'<div style="display:grid;grid-template-columns:repeat(3,1fr);grid-template-rows:repeat(3,1fr);'
            f'width:3.6em;height:3.6em;border:1px solid #999;border-radius:0.2em;overflow:hidden">'
            f'{"".join(cells)}</div></div>')


def deal_html(deal: Deal) -> str:
    """A self-contained HTML fragment: the deal in a 3×3 grid with a compass in the middle."""
    empty = '<div class="deal-cell deal-empty"></div>'
    meta = ""
    parts = _meta_parts(deal)
    if parts:
        shown = []
        for label, value in parts:
            v = _contract_html(str(deal.contract)) if label == "Contract" else escape(value)
            shown.append(f'<span class="deal-{label.lower()}">{escape(label)} <b>{v}</b></span>')
        meta = (f'<div class="deal-meta" style="margin-bottom:0.3em;font-size:0.9em">'
                f'{" · ".join(shown)}</div>')
    cells = [
        empty, _hand_html("north", deal.north), empty,
        _hand_html("west", deal.west), _compass_html(deal), _hand_html("east", deal.east),
        empty, _hand_html("south", deal.south), empty,
    ]
    grid = (f'<div class="deal-grid" style="display:grid;grid-template-columns:repeat(3,minmax(0,1fr));'
            f'gap:0.3em 0.4em;align-items:center">{"".join(cells)}</div>')
    return (f'<div class="bridge-deal" style="max-width:22em;width:100%;box-sizing:border-box;'
            f'font-family:ui-monospace,Menlo,Consolas,monospace;font-size:0.95em;line-height:1.35;'
            f'margin:0.5em 0;overflow-x:auto">{meta}{grid}</div>')


# --------------------------------------------------------------------------------------------
# plain text


def _hand_lines(hand: Hand | None) -> list[str]:
    if hand is None:
        return ["", "", "", ""]
    return [f"{sym} {_holding(getattr(hand, attr, ''))}" for attr, sym in _SUITS]


def _compass_lines(deal: Deal) -> list[str]:
    dealer = str(deal.dealer or "").upper()[:1]
    dealer = "W" if dealer == "O" else dealer

    def mark(letter: str) -> str:
        return f"[{letter}]" if letter == dealer else letter

    return [mark("N").center(7), f"{mark('W'):<3} {mark('E'):>3}", mark("S").center(7), ""]


def deal_text(deal: Deal) -> str:
    """The same layout in monospace: North above, West and East either side of a compass, South below.

    The dealer's letter is in brackets in the compass; contract, dealer and vulnerability head it.
    """
    north, south = _hand_lines(deal.north), _hand_lines(deal.south)
    west, east = _hand_lines(deal.west), _hand_lines(deal.east)
    compass = _compass_lines(deal)
    width = max(7, *(len(x) for x in north + south + west + east)) + 3
    out: list[str] = []
    for line in north:
        out.append((" " * width + line).rstrip())
    for w, c, e in zip(west, compass, east, strict=True):
        out.append((w.ljust(width) + c.center(width) + e).rstrip())
    for line in south:
        out.append((" " * width + line).rstrip())
    while out and not out[-1]:
        out.pop()
    while out and not out[0]:
        out.pop(0)
    parts = _meta_parts(deal)
    if parts:
        out.insert(0, "  ".join(f"{label} {value}" for label, value in parts))
    return "\n".join(out)


# --------------------------------------------------------------------------------------------
# search results, law chips, breadcrumbs (HTML fragments for the app; inline CSS, no script)

KIND_LABELS = {"law_text": "law text", "example": "example", "commentary": "commentary"}
_KIND_COLOURS = {"law_text": "#1f5fa8", "example": "#2e7d32", "commentary": "#8a5a00"}
_WRAP = "overflow-wrap:anywhere;word-break:break-word"
_CHIP_STYLE = ("display:inline-block;margin:0.1em 0.25em 0.1em 0;padding:0.05em 0.5em;border-radius:1em;"
               "border:1px solid #1f5fa8;color:#1f5fa8;background:rgba(31,95,168,0.08);text-decoration:none;"
               "font-size:0.85em;font-weight:600;white-space:nowrap;line-height:1.5")
_CHIP_MINOR = ("display:inline-block;margin:0.1em 0.25em 0.1em 0;padding:0.05em 0.5em;border-radius:1em;"
               "border:1px dashed #777;color:inherit;text-decoration:none;font-size:0.8em;white-space:nowrap;"
               "line-height:1.5;opacity:0.85")
_BADGE = ("display:inline-block;margin-right:0.35em;padding:0 0.45em;border-radius:0.3em;font-size:0.75em;"
          "font-weight:600;letter-spacing:0.02em;text-transform:uppercase;vertical-align:0.1em")
_MARKED = re.compile(r"\*\*([^*\n]+?)\*\*")


def _law_href(ref: str, link_base: str = "") -> str:
    from urllib.parse import quote

    return f"{link_base}?law={quote(str(ref), safe='')}"


def law_chip(ref: str, link_base: str = "", minor: bool = False, label: str | None = None) -> str:
    """A law address as a small rounded link to its law page (`?law=45C4b`)."""
    text = escape(label if label is not None else str(ref))
    style = _CHIP_MINOR if minor else _CHIP_STYLE
    cls = "law-chip minor" if minor else "law-chip"
    return (f'<a class="{cls}" href="{escape(_law_href(ref, link_base))}" target="_self" '
            f'data-law="{escape(str(ref))}" style="{style}">{text}</a>')


def red_suits(escaped: str) -> str:
    """Colour the ♥ and ♦ symbols of already-escaped text red (♠ ♣ keep the text colour)."""
    return re.sub("([♥♦])", rf'<span style="color:{_RED}">\1</span>', escaped)


def record_html(record: list[str], framing: list[str] = (), clip: int = 80) -> str:
    """What a search set aside (kb/record.py), shown so the director sees what was not read."""
    def items(parts) -> str:
        return " · ".join(red_suits(escape(r if len(r) <= clip else r[:clip - 1] + "…")) for r in parts)
    said = [f"the board's record: {items(record)}"] if record else []
    said += [f"framing: {items(framing)}"] if framing else []
    return (f'<p class="record-note" style="font-size:0.85em;color:#555;margin:0 0 0.5em 0">'
            f"Not searched, {'; '.join(said)}</p>")


# Function words the snippet marks too ("the", "della", "των"): shown plain, so the marks point at
# what matters. Compared lower-cased and without accents.
_PLAIN_WORDS = frozenset("""
the and for that this with was were are his her its has had but from into then than they them
del dal dei della delle dello degli alla alle allo agli nel nella nelle che con per una uno gli
sul sulla come non
των την τον του της τις τους και στο στη στην στον από για που ένα μια ενα ότι οτι απο είναι ειναι
""".split())


def _plain_word(word: str) -> bool:
    import unicodedata

    folded = "".join(c for c in unicodedata.normalize("NFD", word.lower()) if not unicodedata.combining(c))
    return folded in _PLAIN_WORDS


def _mark(m: re.Match) -> str:
    word = m.group(1)
    if _plain_word(word):
        return word
    return f'<mark style="background:rgba(255,200,0,0.45);color:inherit;padding:0 0.1em;border-radius:0.15em">' \
           f'{word}</mark>'


def snippet_html(snippet: str) -> str:
    """A search snippet with its `**marked**` words highlighted (function words left plain);
    everything else escaped."""
    out = escape(snippet or "")
    out = _MARKED.sub(_mark, out)
    return red_suits(out.replace("**", ""))


# A table written with pipes (Markdown, or a PDF made from it): "| 1) | 45C2 | Not played. |", a list marker allowed
_TABLE_ROW = re.compile(r"^\s*(?:[-*]\s+)?\|.*\|\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")
_CELL = "padding:0.15em 0.6em;border-bottom:1px solid rgba(128,128,128,0.3);text-align:left;vertical-align:top"


def text_html(text: str) -> str:
    """A passage's full text, escaped, line breaks kept (as <br>: the fragment stays one line), red suits; a
    pipe table (two rows or more) drawn as a table, as its writer meant it to be read."""
    lines = (text or "").replace("\r\n", "\n").replace("\r", "\n").strip("\n").split("\n")
    pieces: list[tuple[bool, str]] = []  # (is a table, html)
    i = 0
    while i < len(lines):
        j = i
        while j < len(lines) and (_TABLE_ROW.match(lines[j]) or (j > i and _TABLE_RULE.match(lines[j]))):
            j += 1
        rows = [ln for ln in lines[i:j] if not _TABLE_RULE.match(ln)]
        if len(rows) >= 2:
            pieces.append((True, _table_html(lines[i:j])))
            i = j
        else:
            pieces.append((False, red_suits(escape(lines[i]))))
            i += 1
    out = ""
    for k, (table, piece) in enumerate(pieces):
        out += piece if k == 0 or table or pieces[k - 1][0] else "<br>" + piece
    return out


def _table_html(lines: list[str]) -> str:
    """Pipe-table lines as an HTML table: a row over a |---| rule is the header, left out when it is empty."""
    def cells(line: str) -> list[str]:
        body = re.sub(r"^\s*(?:[-*]\s+)?\|", "", line.rstrip()).removesuffix("|")
        return [c.strip() for c in body.split("|")]

    head = cells(lines[0]) if len(lines) > 1 and _TABLE_RULE.match(lines[1]) else None
    body = [cells(ln) for ln in (lines[2:] if head is not None else lines) if not _TABLE_RULE.match(ln)]
    html_rows = []
    if head and any(head):
        html_rows.append("<tr>" + "".join(f'<th style="{_CELL}">{red_suits(escape(c))}</th>' for c in head) + "</tr>")
    html_rows += ["<tr>" + "".join(f'<td style="{_CELL}">{red_suits(escape(c))}</td>' for c in row) + "</tr>"
                  for row in body]
    return ('<table class="text-table" style="border-collapse:collapse;margin:0.3em 0">'
            + "".join(html_rows) + "</table>")


def _pages(page: int | None, page_end: int | None) -> str:
    if not page:
        return ""
    if page_end and page_end != page:
        return f"p. {page}–{page_end}"
    return f"p. {page}"


def source_line(doc: str, page: int | None, page_end: int | None = None, doc_title: str | None = None) -> str:
    """'document · p. 4' (or 'p. 3–4'), plain text."""
    pages = _pages(page, page_end)
    return " · ".join(x for x in (doc_title or doc, pages) if x)


def also_in_html(also_in, link_base: str = "") -> str:
    """'also in: IT p.1 · EL p.2', each a link to the law page of that passage's law."""
    if not also_in:
        return ""
    links = []
    for a in also_in:
        label = f"{str(a.lang).upper()} p.{a.page}" if a.page else str(a.lang).upper()
        links.append(f'<a href="{escape(_law_href(a.law, link_base))}" target="_self" '
                     f'title="{escape(f"{a.doc} · {a.law}")}" style="text-decoration:none">{escape(label)}</a>')
    return (f'<div class="hit-also" style="font-size:0.85em;margin-top:0.25em;{_WRAP}">also in: '
            f'{" · ".join(links)}</div>')


def same_text_line(hit, copies, titles: dict[str, str] | None = None) -> str:
    """'the same text also on p. 5, p. 9 · <another document> p. 2', plain text: where else a passage shown once
    stands (a lecture quoting a law on several pages); pages in order, those of the hit's own document bare."""
    by_doc: dict[str, list] = {}
    for c in copies:
        by_doc.setdefault(c.doc, []).append(c)
    parts = []
    for doc, cs in by_doc.items():
        pages = ", ".join(_pages(c.page, getattr(c, "page_end", None)) for c in sorted(cs, key=lambda c: c.page or 0))
        parts.append(pages if doc == hit.doc else f"{(titles or {}).get(doc) or doc} {pages}")
    return "the same text also on " + " · ".join(parts) if parts else ""


def _same_text_html(hit) -> str:
    line = same_text_line(hit, getattr(hit, "same_text", None) or [])
    return (f'<div class="same-text" style="font-size:0.85em;opacity:0.8;margin-top:0.2em;{_WRAP}">{escape(line)}</div>'
            if line else "")


def hit_card_html(hit, link_base: str = "", full_text: bool = False, doc_title: str | None = None,
                  show_title: bool = True) -> str:
    """One passage as a card: title, kind and language badges, law chips, snippet (or the full
    text), source line 'document · p. 4', where else the same text stands, and 'also in' links to the other
    languages."""
    kind = str(hit.kind or "")
    colour = _KIND_COLOURS.get(kind, "#555")
    badges = (f'<span class="hit-kind" data-kind="{escape(kind)}" style="{_BADGE};color:#fff;'
              f'background:{colour}">{escape(KIND_LABELS.get(kind, kind))}</span>'
              f'<span class="hit-lang" data-lang="{escape(str(hit.lang))}" style="{_BADGE};border:1px solid #888">'
              f'{escape(str(hit.lang).upper())}</span>')
    title = (f'<span class="hit-title" style="font-weight:600">{escape(hit.title or "")}</span>'
             if show_title else "")
    chips = "".join(law_chip(r, link_base) for r in (hit.laws or []))
    cites = [c for c in (hit.cites or []) if c not in (hit.laws or [])]
    if cites:
        chips += ('<span style="font-size:0.8em;opacity:0.8;margin:0 0.25em">cites</span>'
                  + "".join(law_chip(c, link_base, minor=True) for c in cites))
    if not hit.laws and getattr(hit, "inferred", None):
        chips += ('<span style="font-size:0.8em;opacity:0.8;margin:0 0.25em">probably</span>'
                  + "".join(law_chip(c, link_base, minor=True) for c in list(hit.inferred)[:3]))
    body = text_html(hit.text) if full_text else snippet_html(hit.snippet)
    source = escape(source_line(hit.doc, hit.page, hit.page_end, doc_title))
    return (
        f'<div class="hit-card" data-kind="{escape(kind)}" data-lang="{escape(str(hit.lang))}" '
        f'style="box-sizing:border-box;max-width:100%;border:1px solid rgba(128,128,128,0.35);'
        f'border-left:4px solid {colour};border-radius:0.5em;padding:0.6em 0.8em;margin:0 0 0.8em 0;{_WRAP}">'
        f'<div class="hit-head" style="margin-bottom:0.3em;line-height:1.6">{badges}{title}</div>'
        + (f'<div class="hit-laws" style="margin-bottom:0.3em">{chips}</div>' if chips else "")
        + f'<div class="hit-snippet" style="line-height:1.5;{_WRAP}">{body}</div>'
        f'<div class="hit-source" title="{escape(hit.doc or "")}" style="font-size:0.85em;opacity:0.8;'
        f'margin-top:0.35em;{_WRAP}">{source}</div>'
        f'{_same_text_html(hit)}{also_in_html(hit.also_in, link_base)}</div>'
    ).replace("\n", " ")


def breadcrumbs_html(ancestors: list[str], ref: str, link_base: str = "") -> str:
    """45 › 45C › 45C4 › 45C4b, each a link to its law page; the current one marked."""
    links = []
    for a in [*ancestors, ref]:
        current = a == ref
        style = "text-decoration:none;" + ("font-weight:700" if current else "")
        aria = ' aria-current="page"' if current else ""
        links.append(f'<a href="{escape(_law_href(a, link_base))}" target="_self"{aria} style="{style}">'
                     f'{escape(a)}</a>')
    sep = '<span style="opacity:0.6;margin:0 0.35em">›</span>'
    return f'<nav class="law-crumbs" aria-label="law hierarchy" style="{_WRAP}">{sep.join(links)}</nav>'


def deal_panel_html(deal: Deal) -> str:
    """deal_html on a light panel, so black suits stay readable under a dark theme."""
    return (f'<div class="deal-panel" style="background:#fff;color:#000;border-radius:0.4em;padding:0.3em 0.5em;'
            f'max-width:23em;box-sizing:border-box">{deal_html(deal)}</div>')


_COMPASS_LINE = re.compile(r"^\s*[NSEW](?:\s+[NSEW])*\s*$")
_SUIT_SYMBOL = re.compile("[♠♥♦♣]")


def _diagram_line(line: str) -> bool:
    """A line of a hand diagram ('♠ KJ852', '♥ 74    W    E    ♥ A10983') or of its compass ('N', 'W E').
    Play records ('♣5    ♣J    ♣2') are not: their suit symbols are glued to the card."""
    if _COMPASS_LINE.match(line):
        return True
    s = line.strip()
    if not s or s[0] not in "♠♥♦♣":
        return False
    return all(m.end() >= len(line) or line[m.end()] in " \t\u202f\u00a0" for m in _SUIT_SYMBOL.finditer(line))


def narrative(text: str, drop_diagram: bool = True) -> str:
    """An example's text without its bare number and (by default) its deal diagram lines, which are
    shown drawn instead."""
    lines = [ln for ln in (text or "").split("\n") if not (drop_diagram and _diagram_line(ln))]
    while lines and (not lines[0].strip() or lines[0].strip().isdigit()):
        lines.pop(0)
    return "\n".join(lines).strip()


def example_html(hit, link_base: str = "", doc_title: str | None = None) -> str:
    """A worked example: heading, law chips, the deal drawn, then the question and the answer
    (or its text when the document does not split them), source and other languages."""
    from ingest.model import Deal as _Deal

    no = f"Example {hit.example_no}" if hit.example_no else "Example"
    kind_colour = _KIND_COLOURS["example"]
    head = (f'<div class="ex-head" style="line-height:1.6;margin-bottom:0.3em">'
            f'<span class="hit-lang" data-lang="{escape(str(hit.lang))}" style="{_BADGE};border:1px solid #888">'
            f'{escape(str(hit.lang).upper())}</span><b>{escape(no)}</b>'
            f'<span style="opacity:0.8"> · {escape(hit.title or "")}</span></div>')
    chips = "".join(law_chip(r, link_base) for r in (hit.laws or []))
    cites = [c for c in (hit.cites or []) if c not in (hit.laws or [])]
    if cites:
        chips += ('<span style="font-size:0.8em;opacity:0.8;margin:0 0.25em">cites</span>'
                  + "".join(law_chip(c, link_base, minor=True) for c in cites))
    deal = _Deal.from_dict(hit.deal) if isinstance(hit.deal, dict) else hit.deal
    parts = [head]
    if chips:
        parts.append(f'<div class="ex-laws" style="margin-bottom:0.4em">{chips}</div>')
    block = f'style="margin:0 0 0.5em 0;line-height:1.5;{_WRAP}"'
    words = []
    if hit.question or hit.answer:
        if hit.question:
            words.append(f'<div class="ex-question" {block}><b>Question</b><br>{text_html(hit.question)}</div>')
        if hit.answer:
            words.append(f'<div class="ex-answer" {block}><b>Answer</b><br>{text_html(hit.answer)}</div>')
    else:
        story = narrative(hit.text, drop_diagram=deal is not None)
        words.append(f'<div class="ex-text" {block}>{text_html(story)}</div>')
    # the deal beside the words on a wide screen, above them on a phone (flex-wrap)
    deal_box = (f'<div class="ex-deal" style="flex:0 1 23em;min-width:0;max-width:100%">{deal_panel_html(deal)}</div>'
                if deal is not None else "")
    parts.append(f'<div class="ex-body" style="display:flex;flex-wrap:wrap;gap:0.4em 1.2em;align-items:flex-start">'
                 f'{deal_box}<div class="ex-words" style="flex:1 1 16em;min-width:0">{"".join(words)}</div></div>')
    parts.append(f'<div class="hit-source" title="{escape(hit.doc or "")}" style="font-size:0.85em;opacity:0.8;'
                 f'{_WRAP}">{escape(source_line(hit.doc, hit.page, hit.page_end, doc_title))}</div>')
    parts.append(also_in_html(hit.also_in, link_base))
    return (f'<div class="example-card" data-example="{escape(str(hit.example_no or ""))}" '
            f'style="box-sizing:border-box;max-width:100%;border:1px solid rgba(128,128,128,0.35);'
            f'border-left:4px solid {kind_colour};border-radius:0.5em;padding:0.6em 0.8em;margin:0 0 0.9em 0;'
            f'{_WRAP}">{"".join(parts)}</div>').replace("\n", " ")
