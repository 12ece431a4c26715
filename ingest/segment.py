"""Stage 3 — segment: cleaned lines → blocks of one kind each (law text, worked example, commentary).

The structure of bridge-law documents is in their numbering, so this is a small state machine
over lines:
- a law heading ("LAW 45 – CARD PLAYED", "ART.30 - PASSO FUORI TURNO", "Νόμος 45") opens a law;
- inside a law, law text is split at its own nesting (A. / 1. / (a)), giving addresses such as
  30B2a; a sentence that leads into short (a)/(b) items keeps them in one passage (45C2);
- a bare number in sequence (1, 2, 3 …) under a law opens a worked example of that law;
- a numbered sub-heading ("47D A SEGUITO DEL CAMBIO…", "46 B2 DESIGNATING SUIT…") opens a
  section whose cases are examples when they show a deal, an answer, or say "for instance";
- law text quoted in the middle of an example (lessons do this) is cut out as law text and the
  example resumes after it;
- anything else is commentary, split into paragraphs of readable size.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kb import lawref

from .clean import reflow
from .lang import detect
from .model import Line

GREEK_SECTION = {"Α": "A", "Β": "B", "Γ": "C", "Δ": "D", "Ε": "E", "ΣΤ": "F", "Ζ": "G", "Η": "H"}
GREEK_SUB = {"α": "a", "β": "b", "γ": "c", "δ": "d", "ε": "e"}

_KEYWORD = (r"(?:LAW|Law|LAWS?|ART(?:ICOLO|ICLE|ÍCULO)?|Art(?:icolo|icle|ículo)?|ARTT?|ΝΟΜΟΣ|Νόμος|ΝΌΜΟΣ|"
            r"LOI|Loi|REGEL|Regel|LEY|Ley|ARTIKEL|Artikel)")
_HEADING = re.compile(rf"^\W{{0,3}}{_KEYWORD}\s*\.{{0,2}}\s*(\d{{1,2}})(?![\w/])\s*(?:[-–—=:.|]\s*)?(.*)$")
_INNER_HEADING = re.compile(rf"\b{_KEYWORD}\s*\.?\s*(\d{{1,2}})\s*[-–—]\s*[A-ZÀ-ÚΑ-Ω]")
_SUBHEAD = re.compile(r"^(\d{1,2})\s?([A-H])\s?(\d)?\s*[.)]?\s+(\S.*)$")
_SUBSCOPE = re.compile(r"^(\d)\)\s+(\S.*)$")
_EXAMPLE_NO = re.compile(r"^\s*(\d{1,2})\s*$")
# "Example 3", "Esempio 12 - Il morto avverte", "Παράδειγμα 2:", "Exemple n° 4", "Caso 5.", "Appeal 7" alone on a line
_EXAMPLE_WORD = (r"(example|esempio|παράδειγμα|exemple|beispiel|ejemplo|voorbeeld|caso|case|fall|cas|appeal|appello|"
                 r"ricorso|έφεση|υπόθεση|problem|problema|πρόβλημα)")
_EXAMPLE_NUMBER = r"\s*(?:n[.°º]?\s*|nr\.?\s*|no\.?\s*|núm\.?\s*|αρ\.?\s*|#\s*)?(\d{1,3})"
_EXAMPLE_HEADING = re.compile(rf"^\W{{0,3}}{_EXAMPLE_WORD}{_EXAMPLE_NUMBER}\s*(?:[-–—:.)]\s*(.{{0,80}}))?$", re.IGNORECASE)
# "Example 1. South is declarer in 6♥ ..." / "Esempio 2: ..." / "Παράδειγμα 1. ...": a numbered example whose case
# starts on its own heading line (handouts write them so)
_EXAMPLE_INLINE = re.compile(rf"^\W{{0,3}}{_EXAMPLE_WORD}{_EXAMPLE_NUMBER}\s*[-–—:.)]\s+(\S.{{40,}})$", re.IGNORECASE)
# "Q: North broke tempo ...": a question of a questions-and-answers document (its answer: "A: ...")
_QA_QUESTION = re.compile(r"^\W{0,3}(?:(?-i:Q)|question|domanda|ερώτηση|frage|pregunta)\s*(\d{1,3})?\s*:\s*(\S.*)$",
                          re.IGNORECASE)
_MD_HEADING = re.compile(r"^#{1,6}\s+")  # Markdown: a heading whatever its case
# "Law 74A – Proper attitude. Players must ..." / "Art. 13 A – Intervento dell'Arbitro." / "Νόμος 35Α. Κόντρα ...": a
# paragraph that opens with the law section it explains
_LAW_PARAGRAPH = re.compile(rf"^\W{{0,3}}{_KEYWORD}\s*\.?\s*(\d{{1,2}})\s?(ΣΤ|[A-HΑ-Η])\s?(\d)?\s?([a-eα-ε])?"
                            r"\s*[-–—:.)]\s*(\S.*)$")
_SECTION = re.compile(r"^(ΣΤ|[A-HΑ-Η])\s*[.)]\s*(\S.*)?$")
_DIGIT = re.compile(r"^(\d)\s*[.)]\s*(\S.*)?$")
_SUB = re.compile(r"^\(?([a-eα-ε])\)\s*(\S.*)?$")
_ELLIPSIS = re.compile(r"^\[\s*(?:\.\s*){3}\]$|^\[…\]$")
_BULLET = re.compile(r"^[-–•]\s+")
_MARKUP = re.compile(r"\*\*|</?u>|</?b>|</?i>")
_ANSWER_WORD = (r"(?:risposta|risposte|answer|answers|ruling|decision|la decisione|decisione|soluzione|"
                r"απάντηση|απαντήσεις|απόφαση|réponse|décision|antwort|entscheidung|respuesta|decisión|"
                r"antwoord|beslissing)")
# "Ruling: …", "Risposta.", and with a word or two around it before a colon ("Director's ruling:", "Decisione
# del comitato:", "Απόφαση επιτροπής:"); "A:" / "R:" answering a "Q:"
_ANSWER = re.compile(rf"^\W*(?:{_ANSWER_WORD}\s*(?:[:.]\**\s*|$)|(?:[\w'’]+\s+){{0,2}}{_ANSWER_WORD}(?:\s+[\w'’]+){{0,2}}"
                     r"\s*:\**\s*|(?-i:[ARΑ])\d{0,3}\s*:\s*)", re.IGNORECASE)
_SEAT_CUE = re.compile(r"^(?:\d\)\s*)?(?:North|South|East|West|Nord|Sud|Est|Ovest|EW|NS|EO|E/W|N/S|E-W|N-S|"
                       r"Βορράς|Νότος|Ανατολή|Δύση|Nord|Süd|Ost|Norte|Sur|Este|Oeste)\b")
_EXAMPLE_CUE = re.compile(r"(?:^ES:|^EX:|\b(?:ad esempio|per esempio|esempio|for instance|for example|example|"
                          r"π\.χ\.|παράδειγμα|par exemple|zum beispiel|beispiel|por ejemplo|ejemplo)\b)",
                          re.IGNORECASE)
_NEW_EXAMPLE_CUE = re.compile(r"^(?:a further example|another example|altro esempio|ulteriore esempio|"
                              r"un altro esempio|ένα ακόμη παράδειγμα)\b", re.IGNORECASE)
_DEAL_LINE = re.compile(r"^\s*[♠♥♦♣]\s*(?:[AKQJTDR2-9x]|10|-|—)")
_QUESTION_END = re.compile(r"(?:\?|\bTD[.!]?|\bArbitro[.!]?|\bDirector[.!]?|\bΔιαιτητή[ς]?[.!]?)\s*\**\s*$",
                           re.IGNORECASE)
_SENT_END = re.compile(r"[.;:!?»”)]\**\s*$")
COMMENTARY_WORDS = 140


@dataclass
class Block:
    """A run of lines of one kind, before it becomes a Passage."""

    kind: str  # law_text | example | commentary
    lines: list[Line] = field(default_factory=list)
    address: str | None = None  # law text: its own address (30B2a); example: section scope (47D)
    chapter: str | None = None  # the law heading it sits under
    title: str = ""
    example_no: str | None = None
    quoted: list[tuple[str, bool]] = field(default_factory=list)  # law text quoted inside an example (bold?)

    def text_lines(self) -> list[str]:
        return [ln.text for ln in self.lines]

    def has_text(self) -> bool:
        return any(ln.text.strip() for ln in self.lines)


def plain(text: str) -> str:
    """Text without emphasis markup, for structure tests."""
    return _MARKUP.sub("", text).strip()


def _unmarked(text: str) -> tuple[str, bool]:
    """The text without a Markdown heading marker ("## "), and whether it had one."""
    md = _MD_HEADING.match(text)
    return (text[md.end():], True) if md else (text, False)


def law_heading(text: str, any_case: bool = False) -> tuple[str, str] | None:
    """(law number, title) when the line opens a law/article; titles are upper case or absent (any case for a
    line marked as a heading, `any_case`: Markdown's "## Art. 17 – Il periodo della licita")."""
    m = _HEADING.match(plain(text))
    if not m:
        return None
    num, rest = m.group(1), m.group(2).strip(" |*")
    if not lawref.canonical(num):
        return None
    letters = [c for c in rest if c.isalpha()]
    if letters and not any_case and sum(c.isupper() for c in letters) / len(letters) < 0.7:
        return None
    return num, rest


def _law_paragraph(text: str) -> str | None:
    """'74A' for 'Law 74A – Proper attitude. Players must …', '36A' for 'Νόμος 36Α. …'; None otherwise."""
    m = _LAW_PARAGRAPH.match(text)
    if not m:
        return None
    section = GREEK_SECTION.get(m.group(2), m.group(2))
    sub = GREEK_SUB.get(m.group(4), m.group(4)) if m.group(4) else ""
    return lawref.canonical(f"{int(m.group(1))}{section}{m.group(3) or ''}{sub if m.group(3) else ''}")


def sub_heading(text: str, any_case: bool = False) -> tuple[str, str] | None:
    """('47D', title) for '47D A SEGUITO DEL CAMBIO…' / '46 B2 DESIGNATING SUIT BUT NOT RANK' (any case with
    `any_case`: Markdown's "### 17 A – Chi apre la licita")."""
    m = _SUBHEAD.match(plain(text))
    if not m:
        return None
    title = m.group(4)
    letters = [c for c in title if c.isalpha()]
    if len(letters) < 4 or not any_case and sum(c.isupper() for c in letters) / len(letters) < 0.7:
        return None
    return f"{int(m.group(1))}{m.group(2)}{m.group(3) or ''}", title.strip()


def _upper_title(text: str) -> bool:
    letters = [c for c in text if c.isalpha()]
    return len(letters) >= 4 and sum(c.isupper() for c in letters) / len(letters) >= 0.7


class _LawCursor:
    """Where we are inside one law's numbering: section letter, digit, sub letter."""

    def __init__(self, law: str) -> None:
        self.law = law
        self.section: str | None = None
        self.digit: str | None = None
        self.sub: str | None = None
        self.free = True  # at the start, and after "[. . .]", any number may come next
        self.elided = False  # a "[. . .]" was seen: a bare "(b)" may continue an omitted paragraph

    def address(self) -> str:
        return f"{self.law}{self.section or ''}{self.digit or '' if self.section else ''}" \
               f"{self.sub or '' if self.section and self.digit else ''}"

    def step(self, text: str) -> tuple[str, str] | None:
        """If the line opens a numbered item that fits the nesting, move there: (level, rest)."""
        t = _BULLET.sub("", plain(text))
        m = _SECTION.match(t)
        if m:
            letter = GREEK_SECTION.get(m.group(1), m.group(1))
            if self.free or self.section is None and letter == "A" or self.section and letter > self.section:
                self.section, self.digit, self.sub, self.free = letter, None, None, False
                return "section", m.group(2) or ""
        m = _DIGIT.match(t)
        if m and (self.section or self.free):
            d = m.group(1)
            if self.free or (self.digit is None and d == "1") or (self.digit and int(d) == int(self.digit) + 1):
                self.digit, self.sub, self.free = d, None, False
                rest = m.group(2) or ""
                sm = _SUB.match(rest)
                if sm:  # "4. (a) A card must be played …"
                    self.sub = GREEK_SUB.get(sm.group(1), sm.group(1))
                    return "sub", sm.group(2) or ""
                return "digit", rest
        m = _SUB.match(t)
        # Right under a heading, a bare "b)" with nothing elided is an answer item ("- b) According to
        # Law 45C2 …"), not a sub-paragraph of a law quoted without its numbering.
        if m and (self.digit or self.free and (self.elided or self.section or t.startswith("("))):
            s = GREEK_SUB.get(m.group(1), m.group(1))
            if self.free or (self.sub is None and s == "a") or (self.sub and ord(s) == ord(self.sub) + 1):
                self.sub, self.free = s, False
                return "sub", m.group(2) or ""
        return None


def segment(lines: list[Line], doc_title: str = "") -> list[Block]:
    """Split a cleaned document into blocks; see the module docstring for the rules."""
    seg = _Segmenter(doc_title)
    for ln in lines:
        seg.feed(ln)
    seg.flush()
    blocks = [b for b in seg.blocks if b.has_text() and not _heading_only(b)]
    blocks = _merge_leadins(blocks)
    out: list[Block] = []
    for b in blocks:
        out.extend(_split_commentary(b) if b.kind == "commentary" else [b])
    return out


class _Segmenter:
    def __init__(self, doc_title: str) -> None:
        self.doc_title = doc_title
        self.blocks: list[Block] = []
        self.cur = Block("commentary", title=doc_title)
        self.law: str | None = None  # current law heading number
        self.law_title = ""
        self.topic: str | None = None  # law of a title-case heading ("Law 25 - Changes of Call"), for examples
        self.topic_title = ""
        self.cursor: _LawCursor | None = None
        self.chapter: str | None = None  # law whose examples are being numbered
        self.chapter_title = ""
        self.ex_no = 0
        self.qa_no = 0  # questions of a questions-and-answers page, counted through the document
        self.part = ""  # the heading over them, in a page without law headings
        self.example: Block | None = None  # the open example (resumed after quoted law text)
        self.scope: str | None = None  # sub-section address (47D, 46B2, 47E2)
        self.scope_title = ""
        self.scope_count = 0
        self.blank_run = 1  # the start of the document counts as a break before its first line

    # -- helpers
    def flush(self) -> None:
        if self.cur.has_text():
            if self.cur not in self.blocks:
                self.blocks.append(self.cur)
        self.cur = Block("commentary", chapter=self.law, title=self._commentary_title())

    def _commentary_title(self) -> str:
        return self.law_title or self.doc_title

    def _start(self, block: Block) -> None:
        self.flush()
        self.cur = block

    def _label(self, law: str | None, title: str) -> str:
        return title if title else (f"LAW {law}" if law else self.doc_title)

    # -- the state machine
    def feed(self, ln: Line) -> None:
        text = ln.text
        t = plain(text)
        if not t:
            self.blank_run += 1
            self.cur.lines.append(ln)
            return
        gap, self.blank_run = self.blank_run, 0
        t, md = _unmarked(t)

        head = law_heading(t, any_case=md)
        if head:
            num, rest = head
            kw = re.match(r"\W*(\S+?)\s*\.{0,2}\s*\d", t)
            label = f"{kw.group(1).rstrip('.').upper() if kw else 'LAW'} {num}"
            self.law, self.law_title = num, f"{label} – {rest}" if rest else label
            self.topic = None
            self.cursor = _LawCursor(num)
            self._start(Block("law_text", [ln], address=num, chapter=num, title=self.law_title))
            if self.chapter != num:
                self.scope = None
            return

        m = _EXAMPLE_HEADING.match(t)
        law = self.law or self.topic
        if m and not (m.group(3) and _SENT_END.search(m.group(3)) and len(m.group(3)) > 40):
            # A worked example announced by name: it belongs to the law it stands under, whatever its number
            # (documents number them per law or straight through). A casebook or bulletin without law
            # headings ("Case 12", "Appeal 3") gets its cases too; their laws come from their rulings.
            self._open_example(ln, law, m.group(1).lower(), int(m.group(2)), self.doc_title)
            return

        m = _EXAMPLE_INLINE.match(t)
        if m and law:
            # the same, with the case on the heading's line ("Example 1. South is declarer in 6♥ ...")
            self._open_example(ln, law, m.group(1).lower(), int(m.group(2)), self.doc_title)
            return

        para = _law_paragraph(t)
        if para and self.law and self.cursor and self.cur.kind != "example" and lawref.parts(para)[0] == int(self.law):
            # a section explained in a paragraph that names it: the law's own numbering, written out (inside a
            # worked example such a line is its ruling citing the law)
            _, sec, dig, sub = lawref.parts(para)
            self.cursor.section, self.cursor.digit, self.cursor.sub = sec, str(dig) if dig else None, sub
            self.cursor.free = False
            self.example = None
            self._start(Block("law_text", [ln], address=para, chapter=self.law, title=f"{self.law_title} · {para}"))
            return

        m = _EXAMPLE_NO.match(t)
        if m and self.law:
            n = int(m.group(1))
            if n == 1 or (self.chapter and n == self.ex_no + 1):
                if n == 1:
                    self.chapter, self.chapter_title = self.law, self.law_title
                self.ex_no, self.scope = n, None
                self.example = Block("example", [ln], chapter=self.chapter,
                                     title=f"{self._chapter_label()} · {_ex_word(self.chapter_title)} {n}",
                                     example_no=str(n))
                self._start(self.example)
                return

        m = _QA_QUESTION.match(t)
        if m and self.cur.kind != "law_text":
            # one question of a questions-and-answers page opens a case, answered by its "A:" line
            self.qa_no += 1
            n = int(m.group(1)) if m.group(1) else self.qa_no
            body = [x for x in self.cur.lines if plain(x.text)]
            if self.cur.kind == "commentary" and len(body) == 1 and _looks_title(plain(body[0].text)):
                self.part = _unmarked(plain(body[0].text))[0]  # a lone heading: these questions' title
                self.cur.lines = []
            self._open_example(ln, law, "Q", n, self.part or self.doc_title)
            return

        sub = sub_heading(t, any_case=md)
        if sub and (self.law or self.chapter):
            addr, title = sub
            law_of = re.match(r"\d+", addr).group(0)
            if self.chapter == law_of and self.ex_no and self.example is not None:
                # A step inside a worked example ("46 B1 …" within example 4).
                self.scope = addr
                self.example = Block("example", [ln], address=addr, chapter=self.chapter,
                                     title=f"{self._chapter_label()} · {_ex_word(self.chapter_title)} "
                                           f"{self.ex_no} · {addr}",
                                     example_no=str(self.ex_no))
                self._start(self.example)
                return
            if law_of in (self.law, self.chapter):
                self.scope, self.scope_title, self.scope_count = addr, title, 0
                self.example = None
                self._start(Block("commentary", [ln], address=addr, chapter=law_of,
                                  title=f"{self._label(law_of, self.law_title)} · {addr}"))
                return

        if self.cur.kind == "law_text" and self.cursor:
            if _ELLIPSIS.match(t):
                self.cursor.free = self.cursor.elided = True
                return
            step = self.cursor.step(text)
            if step:
                level, rest = step
                prev = self.cur
                addr = self.cursor.address()
                if self.example is not None:
                    self.example.quoted.append((addr, "**" in text))
                self._start(Block("law_text", [ln], address=addr, chapter=self.law,
                                  title=f"{self.law_title} · {addr}"))
                self.cur.lines[0] = Line(text, ln.page)
                if prev.lines and len(prev.lines) == 1 and plain(prev.lines[0].text) and law_heading(
                        prev.lines[0].text):
                    # keep the heading line with the first item so the law's title is searchable
                    self.cur.lines.insert(0, prev.lines[0])
                    if prev in self.blocks:
                        self.blocks.remove(prev)
                return
            # Law text quoted inside an example ends where an unnumbered sentence starts anew.
            if self.example is not None and self.example.chapter == self.chapter and self._law_done(t):
                self.flush()
                self.cur = self.example
                self.cur.lines.append(ln)
                return
            # A title after a wide gap ends the law text (an intro to the next group of laws).
            if gap >= 2 and _looks_title(t) and self._law_done(t):
                self._start(Block("commentary", [ln], chapter=None, title=t))
                self.law_title = ""
                return

        if self.scope and self.example is None and self.cur.kind in ("commentary", "example"):
            ms = _SUBSCOPE.match(t)
            if ms and _upper_title(ms.group(2)):
                self.scope = re.match(r"\d+[A-H]", self.scope).group(0) + ms.group(1)
                self.scope_count = 0
                self._start(Block("commentary", [ln], address=self.scope, chapter=self.law,
                                  title=f"{self._label(self.law, self.law_title)} · {self.scope}"))
                return
            if self._opens_scope_example(t):
                self.scope_count += 1
                blk = Block("example", [ln], address=self.scope, chapter=self.law,
                            title=f"{self._label(self.law, self.law_title)} · {self.scope} · "
                                  f"{_ex_word(self.law_title)} {self.scope_count}",
                            example_no=f"{self.scope}.{self.scope_count}")
                if self.cur.kind == "commentary" and self.cur.address == self.scope and len(
                        [x for x in self.cur.lines if x.text.strip()]) <= 2:
                    blk.lines = self.cur.lines + blk.lines  # the scope heading belongs to its first case
                    self.cur.lines = []
                self._start(blk)
                return

        if (self.example is not None and self.example.chapter is None and self.cur is self.example and gap >= 1
                and _looks_title(t) and any(_ANSWER.match(plain(x.text)) for x in self.cur.lines)):
            # no law headings to end a case: a title after its ruling opens the next part of the document
            self.example = None
            self._start(Block("commentary", [ln], title=t))
            return

        if (self.cur.kind != "law_text" and (inner := _INNER_HEADING.search(t)) and gap >= 1
                and not _EXAMPLE_NO.match(t) and _looks_title(t)):
            self._start(Block("commentary", [ln], chapter=self.law, title=t))
            self.example = None
            if inner.start() == 0 and lawref.canonical(inner.group(1)):  # "Law 25 - Changes of Call" opens a topic
                self.topic, self.topic_title = inner.group(1), t
            return
        self.cur.lines.append(ln)

    def _open_example(self, ln: Line, law: str | None, word: str, n: int, label_without_law: str) -> None:
        """A worked example announced by name ("Example 3", "Έφεση αρ. 2", "Q:"): under the law or topic it stands
        under, else under `label_without_law` (a casebook's or a Q/A page's cases get their laws from their rulings)."""
        if law:
            self.chapter, self.chapter_title = law, self.law_title if self.law else self.topic_title
            label = self._chapter_label()
        else:
            self.chapter, self.chapter_title = None, ""
            label = label_without_law
        self.ex_no, self.scope = n, None
        title = f"{label} · {word} {n}" if label else f"{word.capitalize()} {n}"
        self.example = Block("example", [ln], chapter=self.chapter, title=title, example_no=str(n))
        self._start(self.example)

    def _chapter_label(self) -> str:
        return self.chapter_title.split(" – ")[0] if self.chapter_title else f"LAW {self.chapter}"

    def _law_done(self, t: str) -> bool:
        last = next((plain(x.text) for x in reversed(self.cur.lines) if plain(x.text)), "")
        return bool(_SENT_END.search(last)) and not t[:1].islower()

    def _opens_scope_example(self, t: str) -> bool:
        """Inside a sub-section: does this line start a new worked case?"""
        if _NEW_EXAMPLE_CUE.match(t):
            return True
        cur = self.cur
        has_deal = any(_DEAL_LINE.match(x.text) for x in cur.lines)
        has_answer = any(_ANSWER.match(plain(x.text)) for x in cur.lines)
        if _DEAL_LINE.match(t):
            prev_deal = bool(cur.lines) and _DEAL_LINE.match(cur.lines[-1].text)
            if prev_deal:
                return False
            return cur.kind == "commentary" or has_answer or (has_deal and _body_after_deal(cur))
        if cur.kind == "commentary" and (_EXAMPLE_CUE.search(t) or re.match(r"^\d\)\s", t) or _SEAT_CUE.match(t)):
            return True
        return False


def _heading_only(b: Block) -> bool:
    """A law heading with nothing under it (the items follow as their own blocks)."""
    body = [x for x in b.lines if plain(x.text)]
    if b.kind != "law_text" or len(body) != 1:
        return False
    text, md = _unmarked(plain(body[0].text))
    return law_heading(text, any_case=md) is not None


def _body_after_deal(b: Block) -> bool:
    seen = False
    for x in b.lines:
        if _DEAL_LINE.match(x.text):
            seen = True
        elif seen and len(plain(x.text)) > 60:
            return True
    return False


def _looks_title(t: str) -> bool:
    return len(t) <= 90 and not _SENT_END.search(t) and t[:1].isupper()


def _ex_word(title: str) -> str:
    """'esempio' under an Italian heading, 'example' otherwise (titles read in the document's tongue)."""
    return "esempio" if title.upper().startswith("ART") else "παράδειγμα" if title.startswith("ΝΟΜ") else "example"


def _merge_leadins(blocks: list[Block]) -> list[Block]:
    """Keep short (a)/(b) items with the sentence that leads into them (45C2 stays whole)."""
    out: list[Block] = []
    for b in blocks:
        if out and b.kind == "law_text" and out[-1].kind == "law_text" and b.address and out[-1].address:
            parent = out[-1]
            if (lawref.parent(b.address) == parent.address and lawref.depth(b.address) == 4
                    and _is_leadin(parent) and len(" ".join(b.text_lines())) < 300):
                parent.lines.extend(b.lines)
                continue
            if (out[-1].address == lawref.parent(b.address) and lawref.depth(b.address) == 4
                    and parent.lines and _absorbed_leadin(out, b)):
                parent.lines.extend(b.lines)
                continue
        out.append(b)
    return out


def _is_leadin(b: Block) -> bool:
    body = [plain(x.text) for x in b.lines if plain(x.text) and not law_heading(x.text)]
    if not body:
        return False
    first = _BULLET.sub("", body[0])
    first = re.sub(r"^(?:ΣΤ|[A-HΑ-Η]|\d)\s*[.)]\s*", "", first)
    text = " ".join([first, *body[1:]]).strip()
    if not text or _upper_title(text) or len(text.split()) < 4:
        return False
    return not re.search(r"[.;!?]\**$", text)


def _absorbed_leadin(out: list[Block], b: Block) -> bool:
    """A later sibling item of a lead-in that already absorbed its first item."""
    parent = out[-1]
    return any(re.match(r"^\W*\(?[a-e]\)", plain(x.text)) for x in parent.lines[1:]) and _is_leadin(
        Block(parent.kind, parent.lines[:1]))


def _split_commentary(b: Block) -> list[Block]:
    """Commentary in paragraphs of readable size; each part keeps the block's title and law context.

    A part also ends where the language changes: a bilingual document (a Greek commentary followed by
    its English text) otherwise gave a passage half in one language, labelled with the other, whose
    second half no search or law page in its own language could find."""
    text = reflow(b.text_lines())
    paras = [p for p in text.split("\n") if p.strip()]
    langs = paragraph_languages(paras)
    if not paras or sum(len(p.split()) for p in paras) <= COMMENTARY_WORDS and len(set(langs)) <= 1:
        return [b]
    # map paragraphs back to pages through the lines they start with
    out: list[Block] = []
    li = 0
    lines = [ln for ln in b.lines if ln.text.strip()]
    cur: list[Line] = []
    words = 0
    for p, lang, before in zip(paras, langs, [langs[0], *langs[:-1]], strict=True):
        n = len(p.split())
        if cur and (words + n > COMMENTARY_WORDS or lang != before):
            out.append(Block(b.kind, cur, address=b.address, chapter=b.chapter, title=b.title))
            cur, words = [], 0
        # consume the physical lines that make up this paragraph
        need = len(p.replace(" ", ""))
        got = 0
        while li < len(lines) and got < need:
            cur.append(lines[li])
            got += len(lines[li].text.replace(" ", "").replace("\t", ""))
            li += 1
        words += n
    cur.extend(lines[li:])
    if cur:
        out.append(Block(b.kind, cur, address=b.address, chapter=b.chapter, title=b.title))
    return out


LANG_WORDS = 8  # a paragraph of fewer words takes its neighbour's language (too little text to tell)
_WORD = re.compile(r"[^\W\d_]{2,}")  # a word for that count: two letters or more (not "###", "19", "C", "–")


def paragraph_languages(paras: list[str]) -> list[str]:
    """Each paragraph's language; a short one (a heading, "Example 3.") takes the one before it, or after it
    at the start."""
    langs: list[str | None] = [detect(p) if len(_WORD.findall(p)) >= LANG_WORDS else None for p in paras]
    known = next((x for x in langs if x and x != "und"), "und")
    out: list[str] = []
    for x in langs:
        known = x if x and x != "und" else known
        out.append(known)
    return out


# ---------------------------------------------------------------- examples: question and answer

def split_question_answer(lines: list[str]) -> tuple[str | None, str | None]:
    """The case as put, and the ruling. An explicit 'Risposta/Answer' wins; else the last question line."""
    body = list(lines)
    while body and (not plain(body[0]) or _EXAMPLE_NO.match(body[0]) or _EXAMPLE_HEADING.match(plain(body[0]))
                    or _EXAMPLE_INLINE.match(plain(body[0])) or _QA_QUESTION.match(plain(body[0]))):
        if inline := _EXAMPLE_INLINE.match(plain(body[0])):  # "Example 1. South is declarer ...": the case begins
            body[0] = inline.group(3)
            break
        if qa := _QA_QUESTION.match(plain(body[0])):  # "Q: North broke tempo ...": the question itself
            body[0] = qa.group(2)
            break
        body = body[1:]  # the example's own number is not part of the question
    for i, ln in enumerate(body):
        if _ANSWER.match(plain(ln)):
            q = reflow(body[:i]).strip()
            rest = _ANSWER.sub("", plain(ln), count=1)
            a = reflow(([rest] if rest.strip() else []) + body[i + 1:]).strip()
            return (q or None), (a or None)
    last_q = None
    for i, ln in enumerate(body):
        if _QUESTION_END.search(plain(ln)):
            last_q = i
    if last_q is None or last_q >= len(body) - 1:
        return None, None
    q = reflow(body[: last_q + 1]).strip()
    a = reflow(body[last_q + 1:]).strip()
    if not a:
        return q or None, None
    return q or None, a
