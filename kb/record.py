"""The table record in a question, and the situation without it.

Why: a director's question from a forum or a rulings column often carries the board's record
around the situation: the board number, dealer and vulnerability, the hands, the auction. None of
it says which Law applies, but all of it is read as if it did: "dealer" and "lead" find glossary
concepts, "vulnerable" and "pass" are words to match, and ranks and calls pull the question's
vector towards deal-heavy examples of any rule. Measured with `bench/records.py` (the dev and
tuning questions with a record added before or after them), a record cost 0.05-0.13 of section
Recall@5. So a search reads the situation: the question less its record.

What counts as record (each kind needs the shape of a record, not just one of its words):
- holdings: a suit symbol with two or more ranks ("♠ A K 5 3", "♣K1065", "♥ —"), or two or more
  suit cells in a row ("♠Q ♥AK"); three or more letter-suit cells in a row ("S AK53 H Q102 D J84");
  a seat label just before them ("North:", "Ovest");
- auctions: three or more calls in a row, one of them a bid ("1♣ – 1♥ – X – 2♥", "1SA pasa 2♣ pasa",
  "1♦ 1♠ 2♥ 2♠ / 3♥ P P 3♠ / all pass"), and lines that are only seat names ("W N E S");
- header fields: board number, dealer, vulnerability, in it/en/el/fr/de/es/nl;
- machine formats: a hand viewer's link, PBN tags and dotted hands ("N:AK53.Q102.J84.K76"), LIN fields;
- the label that introduces any of these on its line ("Auction:", "Licita:", "Αγορά:", "My hand:").

A single card named in a sentence ("he played the ♠K") is situation and stays; so do contracts
and leads named in prose ("4♠ by South, lead ♦K").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .glossary import Glossary, question_glossary

__all__ = ["SETTING", "Situation", "situation"]

# Glossary concepts that say only who and where: the director, a player, the table, the pair or team, the event.
SETTING = frozenset({"director", "player", "table", "team", "partnership", "tournament"})
_SENTENCE = re.compile(r"[^\n.!?;]+(?:[.!?;…]+[\"'»”)]*)?")
_QUESTION_MARKS = ("?", ";", "?\"", "?'", "?»", "?”")

_SUIT_VARIANTS = str.maketrans({"♤": "♠", "♡": "♥", "❤": "♥", "♢": "♦", "♧": "♣", "\ufe0f": None, "\ufe0e": None})

_RANK = r"(?:10|[AKQJTRDVBFxX2-9])"  # English ranks, and R/D/V/B/F for other languages' honours
_VOID = r"(?:[-–—]{1,3}|void|chicane|cappotto|Ø)"
# A suit symbol and its holding; ranks may be spaced but stay on one line.
_CELL = rf"[♠♥♦♣][ \t]*:?[ \t]*(?:{_RANK}(?:[ \t]*{_RANK})*|{_VOID})(?![\w])"
_HAND = re.compile(rf"{_CELL}(?:[ \t,;]*{_CELL})*")
_CELL_RE, _RANK_RE, _VOID_RE = re.compile(_CELL), re.compile(_RANK), re.compile(_VOID)
_LETTER_CELL = r"\b[SHDC][ \t]*[:.]?[ \t]*(?:10|[AKQJTx2-9])+\b"
_LETTER_HAND = re.compile(rf"{_LETTER_CELL}(?:[ \t,;]+{_LETTER_CELL}){{2,}}")

_SEAT = (r"(?:N|E|S|W|O|North|South|East|West|Nord|Sud|Est|Ovest|Ouest|Norte|Sur|Este|Oeste|Süd|Ost|Noord|Zuid|Oost"
         r"|Βορράς|Βοράς|Νότος|Ανατολή|Δύση|Β|Ν|Α|Δ)")
_SEAT_LINE = re.compile(rf"(?im)^[ \t]*(?:{_SEAT}[ \t]*[:.]?[ \t]+){{2,3}}{_SEAT}[ \t]*[:.]?[ \t]*$")

_BID = r"[1-7][ \t]?(?:♠|♥|♦|♣|NT|SA|BT|ΧΑ|XA|N|S|H|D|C)(?![\w])"
_PASS = (r"(?:all[ \t]+pass|tutti[ \t]+passano|todos[ \t]+pasan|alle[ \t]+passen|πάσο[ \t]+όλοι|pass(?:e[sd]?|o|a|ano)?|pasa|paso"
         r"|πας|πάσο|AP|P|fine|XX|X|dbl|rdbl|redbl|double|redouble|contro|surcontro|contre|surcontre|kontra|rekontra"
         r"|doblo|redoblo|ντουμπλ|ρεντουμπλ)(?![\w])")
_CALL = rf"\(?[ \t]*(?:{_BID}|{_PASS})[ \t]*\)?[!?*]*"
_SEP = r"[ \t\n,;/–—-]*"
_AUCTION = re.compile(rf"(?i)(?<![\w]){_CALL}(?:{_SEP}{_CALL}){{2,}}")
_BID_RE = re.compile(_BID, re.IGNORECASE)

# Machine formats: a hand viewer's link (BBO's handviewer carries the whole deal in its URL), PBN tags
# and hands ("N:AK53.Q102.J84.K76 ..."), LIN fields ("md|3SAKQ...|").
_LINK = re.compile(r"(?i)\b(?:https?://|www\.)\S+")
_PBN_TAG = re.compile(r'\[(?:Event|Site|Date|Board|Dealer|Vulnerable|Deal|Contract|Declarer|Result|Auction|Play'
                      r'|Scoring|North|South|East|West)[ \t]+"[^"\n]*"\]')
_DOTTED = r"[AKQJT0-9xX]*\.[AKQJT0-9xX]*\.[AKQJT0-9xX]*\.[AKQJT0-9xX]*"
_PBN_HAND = re.compile(rf"(?<![\w.])(?:[NESW]:)?{_DOTTED}(?:[ \t]+{_DOTTED})*(?![\w.])")
_LIN = re.compile(r"(?:\b(?:pn|md|sv|ah|mb|an|pc|pg|rh|st|qx|nt|mc)\|[^|\n]*\|){2,}")
_BOARD = re.compile(
    r"(?i)\b(?:board|bd|brd|smazzata|distribuzione|mano|donne|boardnummer|διανομή|διανομη|spel)"
    r"[ \t]*(?:n[or]?\.?|nr\.?|#|αρ\.?)?[ \t]*:?[ \t]*\d{1,3}\b")
_DEALER = re.compile(
    rf"(?i)\b(?:dealer|dlr|dealt[ \t]+by|donneur|teiler|geber|reparte|repartidor|dador|mazziere|distributore|gever"
    rf"|dich\.|μοιράζει(?:[ \t]+[οη])?|ντίλερ)[ \t]*[:=]?[ \t]*{_SEAT}\b")
_VUL_VALUE = (r"(?:N[-/]?S|E[-/]?W|E[-/]?O|O[-/]?E|N[-/]?Z|O[-/]?W|Nord[-/]Sud|North[-/]South|East[-/]West|Est[-/]Ovest"
              r"|all|both|none|nil|nobody|neither|tutti|nessuno|personne|tous|alle|keiner|niemand|todos|nadie|ninguno"
              r"|όλοι|κανείς|κανένας|Β[-/]?Ν|Α[-/]?Δ|---|--|-|—)")
_VUL = re.compile(
    rf"(?i)(?:\b(?:vul|vuln|vulnerab\w*|vulnérab\w*|zona|gefahr|kwetsbaar|ζώνη)[ \t]*[.:=]?[ \t]*{_VUL_VALUE}(?![\w/])"
    rf"|(?<![\w/]){_VUL_VALUE}[ \t]+(?:vul\w*|vulnérab\w*|in[ \t]+zona|en[ \t]+zona|in[ \t]+gefahr|kwetsbaar"
    rf"|στη[ν]?[ \t]+ζώνη|sono[ \t]+in[ \t]+zona)"
    rf"|\b(?:love|game)[ \t]+all\b)")
_MAYBE_RECORD = re.compile(r"[0-9♠♥♦♣]")
_CAPTION_WORDS = 3
_CUT = "\x00"  # where a piece of record was taken out (prepare_query has removed any NUL of the user's)
_PUNCT_RUN = re.compile(r"(?:\s*[,;:–—-])+\s*([,;.:!?]|$)")
_LABEL = re.compile(r"(?:[^\W\d_][\w'’.]*[ \t]+)?[^\W\d_][\w'’.]*[ \t]*:[ \t]*$")
_SEAT_LABEL = re.compile(rf"(?i)(?<![\w]){_SEAT}[ \t]*[:.]?[ \t]*$")


@dataclass
class Situation:
    """A question split into what a search reads (``text``) and what it set aside."""

    text: str
    record: list[str] = field(default_factory=list)  # the board's record
    framing: list[str] = field(default_factory=list)  # sentences that only say who, where, which event


def situation(question: str, glossary: Glossary | None = None, *, record: bool = True,
              framing: bool = True) -> Situation:
    """The question less its board record and its framing sentences (each can be kept, for ablations).

    A question that is nothing but record or framing is returned whole: there is nothing else to read."""
    text, board = _without_record(question) if record else (question, [])
    text, frame = _without_framing(text, glossary or question_glossary()) if framing else (text, [])
    return Situation(text, board, frame)


def _without_record(question: str) -> tuple[str, list[str]]:
    text = question.translate(_SUIT_VARIANTS)
    if "\n" not in text and not _MAYBE_RECORD.search(text):  # one line, no digit, no suit: no record
        return question, []
    spans = _record_spans(text)
    if not spans:
        return question, []
    removed = [" ".join(text[a:b].split()) for a, b in spans]
    lines = [_tidy(line, removed) if _CUT in line else line for line in _splice(text, spans, _CUT).split("\n")]
    out = re.sub(r"\n\s*\n\s*\n+", "\n\n", "\n".join(line for line in lines if line is not None)).strip()
    if not any(c.isalnum() for c in out):
        return question, []
    return out, removed


def _without_framing(text: str, glossary: Glossary) -> tuple[str, list[str]]:
    """Drop the sentences whose glossary concepts are all setting ("Club pairs, 14 tables, I was the TD",
    "Torneo a squadre, ero l'arbitro"): read as situation, "director" and "table" pull the search
    towards the Laws on the Director and the table. A sentence with no concept at all stays (it may
    carry what the glossary does not know), and so does a question ("Was the TD right?")."""
    if not SETTING & set(glossary.concept_ids(text)):
        return text, []
    spans = [m.span() for m in _SENTENCE.finditer(text) if m.group().strip()]
    drop = []
    for a, b in spans:
        sentence = text[a:b].strip()
        concepts = set(glossary.concept_ids(sentence))
        if concepts and concepts <= SETTING and not sentence.endswith(_QUESTION_MARKS):
            drop.append((a, b))
    if not drop or len(drop) == len(spans):
        return text, []
    kept = re.sub(r"[ \t]*\n[ \t]*\n\s*", "\n\n", re.sub(r"[ \t]{2,}", " ", _splice(text, drop))).strip()
    return kept, [text[a:b].strip() for a, b in drop]


def _splice(text: str, spans: list[tuple[int, int]], mark: str = "") -> str:
    """``text`` without the (sorted, disjoint) spans, each replaced by ``mark``."""
    out, at = [], 0
    for a, b in spans:
        out.append(text[at:a] + mark)
        at = b
    return "".join(out) + text[at:]


def _tidy(line: str, removed: list[str]) -> str | None:
    """A line that lost some record: its words again, without the commas that stood between the cuts.
    A few words left over are the record's caption ("teams", "Bidding went", "dich. Sud"): record too."""
    line = _PUNCT_RUN.sub(r"\1", " ".join(line.replace(_CUT, " ").split())).lstrip(" ,;:.–—-").rstrip(" ,:–—-")
    if len(re.findall(r"\w+", line)) <= _CAPTION_WORDS:
        if any(c.isalnum() for c in line):
            removed.append(line.rstrip(" ."))
        return None
    return line


def _record_spans(text: str) -> list[tuple[int, int]]:
    """Hands and auctions are record wherever they stand; a header field ("dealer South") only on a line
    of record (beside another field, a hand, an auction, or alone): in a sentence, who dealt may be the
    point ("dealer South, but West passed first")."""
    found: dict[str, list[tuple[int, int]]] = {}
    for m in _HAND.finditer(text):
        a, b = _with_label(text, m.start(), m.end(), _SEAT_LABEL)
        cells = [c.group()[1:] for c in _CELL_RE.finditer(m.group())]
        holding = any(len(_RANK_RE.findall(c)) >= 2 or _VOID_RE.search(c) for c in cells)
        # One suit's holding inside a sentence ("dummy has ♦K 8 3") is situation; on a line of its own
        # it is a diagram's row.
        if len(cells) >= 3 or (holding and (len(cells) == 2 or _alone_on_line(text, a, b))):
            found.setdefault("hand", []).append((a, b))
    for m in _LETTER_HAND.finditer(text):
        found.setdefault("hand", []).append(_with_label(text, m.start(), m.end(), _SEAT_LABEL))
    for m in _AUCTION.finditer(text):
        if _BID_RE.search(m.group()):
            found.setdefault("auction", []).append((m.start(), m.end()))
    for m in _PBN_HAND.finditer(text):
        if sum(c.isalnum() for c in m.group()) >= 8:  # a hand's worth of ranks, not "1.2.3.4"
            found.setdefault("hand", []).append((m.start(), m.end()))
    for kind, pattern in (("hand", _LINK), ("hand", _PBN_TAG), ("hand", _LIN), ("auction", _SEAT_LINE),
                          ("board", _BOARD), ("dealer", _DEALER), ("vul", _VUL)):
        for m in pattern.finditer(text):
            found.setdefault(kind, []).append((m.start(), m.end()))
    spans = [span for kind in ("hand", "auction") for span in found.get(kind, [])]
    header = [span for kind in ("board", "dealer", "vul") for span in found.get(kind, [])]
    lines = {_line_of(text, a) for a, _ in spans + header if sum(_line_of(text, x) == _line_of(text, a)
                                                                  for x, _ in spans + header) >= 2}
    spans += [(a, b) for a, b in header if _line_of(text, a) in lines or _alone_on_line(text, a, b)]
    return _merged([_with_label(text, a, b, _LABEL) for a, b in spans])


def _line_of(text: str, pos: int) -> int:
    return text.rfind("\n", 0, pos) + 1


def _alone_on_line(text: str, start: int, end: int) -> bool:
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    rest = text[line_start:start] + text[end:len(text) if line_end < 0 else line_end]
    return not any(c.isalnum() for c in rest)


def _with_label(text: str, start: int, end: int, label: re.Pattern[str]) -> tuple[int, int]:
    """Extend a span leftwards over the label that introduces it on its line ("Auction:", "North")."""
    line_start = text.rfind("\n", 0, start) + 1
    m = label.search(text, line_start, start)
    return (m.start(), end) if m else (start, end)


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out
