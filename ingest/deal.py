"""Find and parse bridge deal diagrams in extracted document text.

Documents show deals in several layouts; all of them reduce to *cells* (a suit symbol followed by
a holding) laid out on lines:

* stacked: one cell per line, the four hands one after another in the order N, W, E, S (the
  order a 3×3 diagram is read row by row), maybe with blank lines or compass letters between;
* grid: North's four lines, then four lines holding West's and East's cell side by side (tabs
  or runs of spaces between), then South's four lines; compass letters may sit in the lines and
  a column may be repeated (we keep the first copy);
* three columns: each line holds the same suit of three hands; columns that hold nothing at all
  are filler;
* partial: only some seats or suits, empty cells ("♠", "♥ -", "♠ ---");
* a table with the suits as columns ("♠ ♥ ♦ ♣" then rows of ranks): one hand, put at North
  (these tables show dummy);
* seat labels ("Nord", "West:") on their own line name the hand below them.

Lines are split into groups of cells whose suits go ♠ → ♣; a group holds one hand per column.
The number of hands per group (1-2-1, 1-1-1-1, ...) and the column positions decide the seats.
Nothing is invented: a hand that would hold more than 13 cards, or a card that another seat
already holds, means the guess was wrong and that seat is dropped. Every public function is
total: arbitrary input gives a result, never an exception.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ingest.model import SUITS, Deal, Hand

__all__ = ["DealSpan", "find_deals", "parse_deal", "deal_context"]

RANKS = "AKQJT98765432"
_ORDER = {r: i for i, r in enumerate(RANKS + "x")}
SYMBOLS = "♠♥♦♣"
_TRANS = str.maketrans({
    "♤": "♠", "♡": "♥", "❤": "♥", "♢": "♦", "♧": "♣",
    "\u00a0": " ", "\u2002": " ", "\u2003": " ", "\u2009": " ", "\u202f": " ", "\u3000": " ",
    "\ufe0f": None, "\ufe0e": None, "\r": None, "\n": None, "\f": None, "\v": None,
})
_LATEX = re.compile(r"\\(?:var)?(spade|heart|diamond|club)s?suit(?![A-Za-z])\s*(?:\{\s*\})?")
_LATEX_SYM = {"spade": "♠", "heart": "♥", "diamond": "♦", "club": "♣"}
_MATH = re.compile(r"\$([^$]{0,60})\$")
_RANK_TOKEN = re.compile(r"(?:10|[AKQJT2-9xX])+")
_RANK = re.compile(r"10|[AKQJT2-9xX]")
_VOID = re.compile(r"[-–—−‒―]{1,4}|[Øø∅]")
_REVCELL = re.compile(r"\s*((?:10|[AKQJT2-9xX])+)\s*([♠♥♦♣])\s*")

# Seats: single letters are compass marks (their place in a diagram is not reliable), words are
# labels that name the hand below them.
_SEAT_LETTERS = {"N": "north", "E": "east", "S": "south", "W": "west", "O": "west"}
_SEAT_WORDS = {
    "nord": "north", "north": "north", "sud": "south", "south": "south",
    "est": "east", "east": "east", "ovest": "west", "west": "west",
}
_MAX_GAP = 6  # non-content lines allowed between two content lines of one diagram
_MAX_BLANKS = 2  # consecutive blank lines allowed inside a diagram


@dataclass
class DealSpan:
    """A diagram found in a list of lines: lines[start:end] hold it."""

    start: int
    end: int
    deal: Deal


# --------------------------------------------------------------------------------------------
# line analysis


@dataclass
class _Cell:
    suit: int  # 0..3 = ♠♥♦♣
    ranks: str  # high to low, 'T' for ten, 'x' for a small card, '' for a void / nothing shown
    col: int  # column of the suit symbol (tabs expanded)


@dataclass
class _Line:
    kind: str  # blank | seats | row | hand | header | text
    cells: list[_Cell] = field(default_factory=list)
    seats: list[str] = field(default_factory=list)  # for 'seats' lines
    label: str | None = None  # a seat word naming what follows
    norm: str = ""
    table_row: dict[int, str] = field(default_factory=dict)  # for 'rankrow' lines: suit -> ranks


def _normalise(raw: object) -> str:
    if not isinstance(raw, str):
        raw = getattr(raw, "text", raw)  # an ingest Line works as well as its text
    s = raw if isinstance(raw, str) else str(raw)
    if "\\" in s:
        s = _LATEX.sub(lambda m: _LATEX_SYM[m.group(1)] + " ", s)
        s = _MATH.sub(lambda m: m.group(1) if any(c in SYMBOLS for c in m.group(1)) else m.group(0), s)
    s = s.translate(_TRANS)
    try:
        return s.expandtabs(8)
    except (OverflowError, MemoryError):  # pragma: no cover - absurd input
        return s.replace("\t", " ")


def _seat_of(token: str) -> tuple[str, bool] | None:
    """(seat, is_label) for a compass letter ('N', 'O') or a seat word ('Nord', 'West:')."""
    colon = token.endswith(":")
    t = token.rstrip(":").strip(".")
    if t in _SEAT_LETTERS:
        return _SEAT_LETTERS[t], colon
    seat = _SEAT_WORDS.get(t.lower())
    if seat is not None and (t[:1].isupper()):
        return seat, True
    return None


def _ranks(token: str) -> list[str] | None:
    if not _RANK_TOKEN.fullmatch(token):
        return None
    return ["T" if r == "10" else ("x" if r in "xX" else r) for r in _RANK.findall(token)]


def _holding(text: str) -> tuple[str, list[str]] | None:
    """What follows a suit symbol: (ranks high→low, seat marks after it), or None if not a holding."""
    ranks: list[str] = []
    marks: list[str] = []
    void = False
    for tok in text.split():
        seat = _seat_of(tok)
        if seat is not None:
            marks.append(seat[0])
            continue
        if marks:  # cards after a compass mark: not something we can read safely
            return None
        if _VOID.fullmatch(tok):
            if ranks:
                return None
            void = True
            continue
        rs = _ranks(tok)
        if rs is None or void:
            return None
        ranks.extend(rs)
    honours = [r for r in ranks if r != "x"]
    if len(set(honours)) != len(honours) or len(ranks) > 13:
        return None
    ranks.sort(key=_ORDER.__getitem__)
    return "".join(ranks), marks


def _analyse(raw: object) -> _Line:
    s = _normalise(raw)
    if not s.strip():
        return _Line("blank", norm=s)
    pos = [i for i, c in enumerate(s) if c in SYMBOLS]
    if not pos:
        toks = s.split()
        found = [x for x in (_seat_of(t) for t in toks) if x is not None]
        if len(toks) <= 8 and len(found) == len(toks):  # compass letters, seat names, a 'N E S W' header
            label = found[0][0] if len(found) == 1 and found[0][1] else None
            return _Line("seats", seats=[x[0] for x in found], label=label, norm=s)
        return _Line("text", norm=s)
    label = None
    for tok in s[: pos[0]].split():
        seat = _seat_of(tok)
        if seat is None:
            return _Line("text", norm=s)
        if seat[1]:
            label = seat[0]
    cells: list[_Cell] = []
    for k, p in enumerate(pos):
        end = pos[k + 1] if k + 1 < len(pos) else len(s)
        h = _holding(s[p + 1 : end])
        if h is None:
            return _Line("text", norm=s)
        cells.append(_Cell("♠♥♦♣".index(s[p]), h[0], p))
    suits = [c.suit for c in cells]
    if len(set(suits)) == 1 and len(cells) <= 4:
        return _Line("row", cells, label=label, norm=s)
    if len(cells) >= 2 and all(a < b for a, b in zip(suits, suits[1:], strict=False)):
        kind = "header" if not any(c.ranks for c in cells) else "hand"
        return _Line(kind, cells, label=label, norm=s)
    return _Line("text", norm=s)


def _rank_row(norm: str, header: list[_Cell]) -> dict[int, str] | None:
    """A row under a '♠ ♥ ♦ ♣' header: suit -> ranks, each token under its nearest symbol."""
    if any(c in SYMBOLS for c in norm):
        return None
    out: dict[int, str] = {}
    tokens = list(re.finditer(r"\S+", norm))
    cols = sorted(c.col for c in header)
    if len(tokens) < len(header) and min(b - a for a, b in zip(cols, cols[1:], strict=False)) <= 2:
        return None  # single-spaced columns: a short row cannot be placed safely
    for m in tokens:
        tok = m.group()
        if _VOID.fullmatch(tok):
            continue
        rs = _ranks(tok)
        if rs is None:
            return None
        cell = min(header, key=lambda c: abs(c.col - m.start()))
        if cell.suit in out:
            return None
        out[cell.suit] = "".join(rs)
    return out or None


# --------------------------------------------------------------------------------------------
# groups: consecutive cell lines whose suits go ♠ → ♣; one hand per column


@dataclass
class _Group:
    first: int  # first line index (a label line above counts)
    last: int  # last line index
    rows: list[list[_Cell]] = field(default_factory=list)
    label: str | None = None
    header: list[str] | None = None  # seats named above side-by-side columns
    table: bool = False
    hands: list[tuple[Hand, int]] = field(default_factory=list)  # (hand, column)
    width: int = 0  # columns before duplicates/fillers were dropped

    def last_suit(self) -> int:
        return self.rows[-1][-1].suit if self.rows else -1


def _to_hand(suits: list[str]) -> Hand:
    return Hand(*suits)


def _build_hands(g: _Group) -> bool:
    """Fill g.hands from g.rows; False if the cells cannot be put in consistent columns."""
    if g.table:
        return True
    width = max(len(r) for r in g.rows)
    g.width = width
    anchor = next(r for r in g.rows if len(r) == width)
    cols = [c.col for c in anchor]
    hands: list[list[str | None]] = [[None] * 4 for _ in cols]
    for row in g.rows:
        if len(row) == width:
            targets = list(range(width))
        else:
            free = list(range(width))
            targets = []
            for c in row:
                j = min(free, key=lambda i: abs(cols[i] - c.col))
                free.remove(j)
                targets.append(j)
        for c, j in zip(row, targets, strict=True):
            if hands[j][c.suit] is not None:
                return False
            hands[j][c.suit] = c.ranks
    made = [(_to_hand([h or "" for h in suits]), col) for suits, col in zip(hands, cols, strict=True)]
    if width >= 3 and g.header is None:
        kept: list[tuple[Hand, int]] = []
        for h, col in made:  # a repeated column is a copy; an all-empty one is filler
            if h.cards() and all(h != k for k, _ in kept):
                kept.append((h, col))
        made = kept
        if len(made) > 2:
            return False
    elif width > 2 and (g.header is None or len(g.header) != width):
        return False
    g.hands = made
    return True


def _col(g: _Group) -> int:
    return min((c.col for r in g.rows for c in r), default=0)


def _assign(groups: list[_Group]) -> list[tuple[str, Hand]] | None:
    """Seats for the hands of one diagram's groups, by layout."""
    sizes = [len(g.hands) for g in groups]
    if any(g.header for g in groups):
        if len(groups) != 1 or len(set(groups[0].header or [])) != len(groups[0].header or []):
            return None
        return [(s, h) for s, (h, _) in zip(groups[0].header or [], groups[0].hands, strict=False)]
    if any(g.label for g in groups):
        out: list[tuple[str, Hand]] = []
        rest: list[Hand] = []
        for g in groups:
            if g.label and len(g.hands) == 1 and g.label not in {s for s, _ in out}:
                out.append((g.label, g.hands[0][0]))
            else:
                rest.extend(h for h, _ in g.hands)
        free = [s for s in ("north", "west", "east", "south") if s not in {s for s, _ in out}]
        return out + list(zip(free, rest, strict=False))
    hands = [[h for h, _ in g.hands] for g in groups]
    if len(groups) == 3 and all(g.width == 3 for g in groups):
        # three hands' holdings side by side: first row holds North (and East), then West, then South
        order = [["north", "east"], ["west", "east"], ["south"]]
        out = []
        for seats, hs in zip(order, hands, strict=True):
            for h in hs:
                seat = next((s for s in seats if s not in {x for x, _ in out}), None)
                if seat is None:
                    return None
                out.append((seat, h))
        return out
    if sizes == [1, 1, 1, 1]:
        return list(zip(("north", "west", "east", "south"), (h[0] for h in hands), strict=True))
    if sizes in ([1, 2, 1], [1, 2], [2, 1], [2]):
        if sizes == [1, 2, 1]:
            seq = ["north", "west", "east", "south"]
        elif sizes == [1, 2]:
            seq = ["north", "west", "east"]
        elif sizes == [2, 1]:
            seq = ["west", "east", "south"]
        else:
            seq = ["west", "east"]
        flat = [h for hs in hands for h in hs]
        return list(zip(seq, flat, strict=True))
    if sizes == [1, 1, 1]:
        top, mid, bottom = (_col(g) for g in groups)
        middle = "east" if mid > max(top, bottom) + 1 else "west"
        return list(zip(("north", middle, "south"), (h[0] for h in hands), strict=True))
    if sizes == [1, 1]:
        top, other = _col(groups[0]), _col(groups[1])
        second = "west" if other < top - 1 else "east" if other > top + 1 else "south"
        return [("north", hands[0][0]), (second, hands[1][0])]
    if sizes == [1]:
        return [("north", hands[0][0])]
    return None


def _validate(assigned: list[tuple[str, Hand]]) -> dict[str, Hand]:
    """Keep seats in order while they are consistent: ≤13 cards, no card twice, ≤13 per suit."""
    seen: set[tuple[int, str]] = set()
    totals = [0, 0, 0, 0]
    out: dict[str, Hand] = {}
    for seat, hand in assigned:
        if seat in out or not 0 < hand.cards() <= 13:
            continue
        holdings = [getattr(hand, s) for s in SUITS]
        cards = {(i, r) for i, h in enumerate(holdings) for r in h if r != "x"}
        if cards & seen or any(totals[i] + len(h) > 13 for i, h in enumerate(holdings)):
            continue
        seen |= cards
        totals = [t + len(h) for t, h in zip(totals, holdings, strict=True)]
        out[seat] = hand
    return out


# --------------------------------------------------------------------------------------------
# blocks of diagram lines → groups → deals


def _groups(info: list[_Line], start: int, end: int) -> list[_Group]:
    """Groups of cells in info[start:end]; label/header lines attach to the group below them."""
    groups: list[_Group] = []
    cur: _Group | None = None
    label: tuple[str, int] | None = None
    header: tuple[list[str], int] | None = None
    i = start
    while i < end:
        ln = info[i]
        if ln.kind == "seats":
            if ln.label:
                label, cur = (ln.label, i), None
            elif len(ln.seats) == 4 and len(set(ln.seats)) == 4:
                header, cur = (ln.seats, i), None
        elif ln.kind == "revcell" and label:
            cur = _Group(label[1], i, [ln.cells], label=label[0])
            groups.append(cur)
            label, cur = None, None
        elif ln.kind == "header":
            g = _Group(i, i, table=True)
            suits = ["", "", "", ""]
            j = i + 1
            while j < end and info[j].kind == "rankrow":
                for s, r in info[j].table_row.items():
                    suits[s] = "".join(sorted(suits[s] + r, key=_ORDER.__getitem__))
                j += 1
            g.last = j - 1
            g.hands = [(_to_hand(suits), 0)]
            g.label = label[0] if label else None
            groups.append(g)
            cur, label = None, None
            i = j
            continue
        elif ln.kind == "hand":
            lab = ln.label or (label[0] if label else None)
            first = label[1] if label else i
            groups.append(_Group(first, i, [[c] for c in ln.cells], label=lab))
            cur, label = None, None
        elif ln.kind == "row":
            width = len(ln.cells)
            fits = (cur is not None and ln.cells[0].suit > cur.last_suit() and not ln.label
                    and (width == 4) == (cur.header is not None))
            if fits and cur is not None:
                cur.rows.append(ln.cells)
                cur.last = i
            else:
                lab = ln.label or (label[0] if label else None)
                first = label[1] if label else i
                hdr = None
                if width == 4 and header is not None:
                    hdr, first = header[0], min(first, header[1])
                cur = _Group(first, i, [ln.cells], label=lab, header=hdr)
                groups.append(cur)
                label, header = None, None
        i += 1
    return groups


def _content(ln: _Line) -> bool:
    return ln.kind in ("row", "hand", "header", "rankrow", "revcell")


def _annotate(lines: list[str]) -> list[_Line]:
    info = [_analyse(x) for x in lines]
    # rows of ranks under a suit header, and 'Q♥' cards right under a seat label
    header: list[_Cell] | None = None
    for k, ln in enumerate(info):
        if ln.kind == "header":
            header = ln.cells
            continue
        if header is not None and ln.kind in ("text", "row") and not any(c in SYMBOLS for c in ln.norm):
            row = _rank_row(ln.norm, header)
            if row is not None:
                ln.kind = "rankrow"
                ln.table_row = row
                continue
        header = None
        if ln.kind == "text" and k and info[k - 1].kind == "seats" and info[k - 1].label:
            m = _REVCELL.fullmatch(ln.norm)
            if m:
                rs = _ranks(m.group(1))
                if rs is not None and len(set(rs)) == len(rs):
                    ln.kind = "revcell"
                    ln.cells = [_Cell("♠♥♦♣".index(m.group(2)), "".join(sorted(rs, key=_ORDER.__getitem__)),
                                      m.start(2))]
    return info


def _blocks(info: list[_Line]) -> list[tuple[int, int]]:
    """[start, end) of runs of diagram lines: content lines with small gaps of blank/seat lines."""
    out: list[tuple[int, int]] = []
    i, n = 0, len(info)
    while i < n:
        if not _content(info[i]):
            i += 1
            continue
        start = last = i
        # a seat label / four-seat header directly above (one blank allowed) belongs to the diagram
        for back in (1, 2):
            k = i - back
            if k < 0:
                break
            if info[k].kind == "seats" and (info[k].label or len(set(info[k].seats)) == 4):
                start = k
                break
            if info[k].kind != "blank":
                break
        j, gap, blanks = i + 1, 0, 0
        while j < n:
            kind = info[j].kind
            if _content(info[j]):
                last, gap, blanks = j, 0, 0
            elif kind in ("blank", "seats"):
                gap += 1
                blanks = blanks + 1 if kind == "blank" else 0
                if gap > _MAX_GAP or blanks > _MAX_BLANKS:
                    break
            else:
                break
            j += 1
        out.append((start, last + 1))
        i = last + 1
    return out


def _deals_in_block(info: list[_Line], start: int, end: int, lenient: bool) -> list[DealSpan]:
    groups = [g for g in _groups(info, start, end) if _build_hands(g)]
    # split into diagrams: a diagram has at most four hands and each label once
    chunks: list[list[_Group]] = []
    count = 0
    for g in groups:
        n = len(g.hands)
        if n == 0:
            continue
        labels = {x.label for x in chunks[-1]} if chunks else set()
        new = (not chunks or count + n > 4 or g.table or (chunks[-1] and chunks[-1][-1].table)
               or (g.label is not None and g.label in labels) or g.header is not None)
        if new:
            chunks.append([g])
            count = n
        else:
            chunks[-1].append(g)
            count += n
    spans: list[DealSpan] = []
    for chunk in chunks:
        lines_used = sum(len(g.rows) for g in chunk) + sum(g.last - g.first + 1 for g in chunk if g.table)
        labelled = any(g.label for g in chunk)
        if not lenient and lines_used < 2 and not labelled:
            continue
        if not lenient and chunk[0].table and chunk[0].last == chunk[0].first:
            continue
        assigned = _assign(chunk)
        if not assigned:
            continue
        hands = _validate(assigned)
        if not hands:
            continue
        spans.append(DealSpan(chunk[0].first, chunk[-1].last + 1, Deal(**hands)))
    return spans


def _find(lines: list[str], lenient: bool = False) -> list[DealSpan]:
    info = _annotate(list(lines))
    spans: list[DealSpan] = []
    for start, end in _blocks(info):
        spans.extend(_deals_in_block(info, start, end, lenient))
    return spans


def find_deals(lines: list[str]) -> list[DealSpan]:
    """All deal diagrams in a block of lines, in order, with the [start, end) line range of each."""
    try:
        return _find(lines)
    except Exception:  # noqa: BLE001 - a diagram we cannot read must never stop an ingest
        return []


def parse_deal(lines: list[str]) -> Deal | None:
    """The deal shown by the lines of one diagram (the first, if there are more); None if unreadable."""
    try:
        spans = _find(lines, lenient=True)
    except Exception:  # noqa: BLE001
        return None
    return spans[0].deal if spans else None


# --------------------------------------------------------------------------------------------
# dealer / vulnerability / contract stated in prose

_SEAT_RE = (r"(?:N(?:ord|orth)?|S(?:ud|outh)?|E(?:st|ast)?|W(?:est)?|O(?:vest)?)"
            r"(?![A-Za-zÀ-ÿ])")
_SEAT_WORD_RE = r"(?:Nord|North|Sud|South|Est|East|Ovest|West)(?![A-Za-zÀ-ÿ])"
_STRAIN_RE = (r"(?:[♠♥♦♣]|N\.?T\.?|S\.?A\.?|senza(?:\s+atout)?|no[\s-]?trumps?|notrumps?|picche|cuori|quadri"
              r"|fiori|spades?|hearts?|diamonds?|clubs?|[SHDC](?![A-Za-z]))")
_CONTRACT_RE = rf"(?P<level>[1-7])\s*(?P<strain>{_STRAIN_RE})(?![A-Za-z0-9])"
_CONTRACT_PATTERNS = [
    re.compile(p, re.IGNORECASE)
    for p in (
        rf"\bcontratt[oi]\s+(?:(?:è|e'|di|a|nel|del)\s+)*{_CONTRACT_RE}",
        rf"\bcontract\s+(?:(?:is|of|was)\s+)*{_CONTRACT_RE}",
        rf"\bin\s+an?\s+{_CONTRACT_RE}\s+contract\b",
        rf"\b(?:dichiarante|declarer)\s+(?:{_SEAT_WORD_RE}\s+)?(?:(?:è|e'|is|a|in|at|of|nel|contratto|contract|di)\s+)*"
        rf"{_CONTRACT_RE}",
        rf"\b{_SEAT_WORD_RE}\s+(?:gioca|giocava|ha giocato|plays|played|is playing|was playing|is in|"
        rf"is at the helm of|è al timone di)\s+{_CONTRACT_RE}",
        rf"{_CONTRACT_RE}\s+(?:giocat[oi]\s+da|by)\s+{_SEAT_WORD_RE}",
    )
]
_STRAINS = {"♠": "S", "♥": "H", "♦": "D", "♣": "C", "picche": "S", "cuori": "H", "quadri": "D", "fiori": "C",
            "spade": "S", "spades": "S", "heart": "H", "hearts": "H", "diamond": "D", "diamonds": "D",
            "club": "C", "clubs": "C", "s": "S", "h": "H", "d": "D", "c": "C"}

_VUL_VALUES = {
    "NS": "NS", "N-S": "NS", "N/S": "NS", "NORD-SUD": "NS", "NORTH-SOUTH": "NS",
    "EW": "EW", "E-W": "EW", "E/W": "EW", "EO": "EW", "E-O": "EW", "E/O": "EW", "OE": "EW", "WE": "EW",
    "EST-OVEST": "EW", "EAST-WEST": "EW",
    "ALL": "All", "BOTH": "All", "TUTTI": "All", "TUTTE": "All", "ENTRAMBE": "All",
    "NONE": "None", "NESSUNO": "None", "NESSUNA": "None", "NIL": "None", "NEITHER": "None", "NOBODY": "None",
    "LOVE": "None", "GAME": "All", "--": "None", "-": "None", "---": "None", "—": "None", "–": "None",
    "Ø": "None", "0": "None",
}
_VUL_VALUE_RE = (r"(?:N[-/]?S|E[-/]?W|E[-/]?O|OE|WE|Nord-Sud|North-South|Est-Ovest|East-West|All|Both|Tutti|Tutte"
                 r"|Entrambe|None|Nessuno|Nessuna|Nil|Neither|Nobody|Love|---|--|-|—|–|Ø|0)")
_VUL_PATTERNS = [
    re.compile(rf"\b(?:vuln?|vulnerab\w*|zona)\s*[.:=]?\s*(?P<v>{_VUL_VALUE_RE})(?![\w/-])", re.IGNORECASE),
    re.compile(r"(?<![\w/-])(?P<v>N[-/]?S|E[-/]?W|E[-/]?O|Tutti|Both|All|Nessuno|None|Nobody|Neither)"
               r"\s+(?:in\s+zona|vulnerable|vuln?\b\.?)", re.IGNORECASE),
    re.compile(r"^\s*(?P<v>Tutti|Nessuno|N/S|E/W|E/O)(?:\s+in\s+zona)?\s*$", re.IGNORECASE | re.MULTILINE),
    re.compile(r"\b(?P<v>love|game)\s+all\b", re.IGNORECASE),
]
_DEALER_VUL = re.compile(
    r"(?<![\w/])(?P<d>[NESWO])\s*/\s*(?P<v>N-?S|E-?W|E-?O|All|Both|Tutti|None|Nessuno|Nil|Love|---|--|-|—|–|Ø)"
    r"(?![\w/-])")
_DEALER_PATTERNS = [
    re.compile(rf"\b(?:dealer|deal|dealt\s+by|mazziere|distributore|smazzatore|donneur)\s*(?:is\s+)?[:=]?\s*"
               rf"(?P<d>{_SEAT_RE})", re.IGNORECASE),
    re.compile(rf"\bdich(?:\.|:)\s*[:=]?\s*(?P<d>{_SEAT_RE})", re.IGNORECASE),
]


def _seat_letter(word: str) -> str:
    w = word[:1].upper()
    return "W" if w == "O" else w


def _contract(m: re.Match) -> str:
    level, strain = m.group("level"), m.group("strain").lower()
    st = _STRAINS.get(strain.rstrip("."))
    if st is None:
        st = "NT"
    return f"{level}{st}"


def deal_context(text: str) -> dict:
    """Dealer / vulnerability / contract stated near a diagram; only the keys that were found."""
    try:
        return _context(text if isinstance(text, str) else str(text))
    except Exception:  # noqa: BLE001
        return {}


def _vul(value: str) -> str | None:
    v = value.strip().upper()
    if v in _VUL_VALUES:
        return _VUL_VALUES[v]
    return {"NS": "NS", "SN": "NS", "EW": "EW", "WE": "EW", "EO": "EW", "OE": "EW"}.get(re.sub(r"[-/ ]", "", v))


def _context(text: str) -> dict:
    text = "\n".join(re.sub(r"[ \t]+", " ", _normalise(x)) for x in text.split("\n"))
    out: dict = {}
    m = _DEALER_VUL.search(text)
    if m:
        out["dealer"] = _seat_letter(m.group("d"))
        vul = _vul(m.group("v"))
        if vul:
            out["vulnerability"] = vul
    if "dealer" not in out:
        found = [m for p in _DEALER_PATTERNS if (m := p.search(text))]
        if found:
            out["dealer"] = _seat_letter(min(found, key=lambda x: x.start()).group("d"))
    if "vulnerability" not in out:
        found = [m for p in _VUL_PATTERNS if (m := p.search(text))]
        if found:
            vul = _vul(min(found, key=lambda x: x.start()).group("v"))
            if vul:
                out["vulnerability"] = vul
    found = [m for p in _CONTRACT_PATTERNS if (m := p.search(text))]
    if found:
        out["contract"] = _contract(min(found, key=lambda x: x.start()))
    return out
