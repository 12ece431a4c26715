"""Show a deal the way a bridge player expects it: North on top, West left, East right, South below.

`deal_html` gives a self-contained fragment (inline CSS, no script) that stays readable on a
390 px phone screen; `deal_text` gives the same layout in monospace for the command line.
"""

from __future__ import annotations

import re
from html import escape

from ingest.model import Deal, Hand

__all__ = ["deal_html", "deal_text"]

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
