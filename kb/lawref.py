"""Law address parser: finds references such as "Law 45C4(b)", "art.43/B2(b)" or "Νόμου 45Γ4β" in text.

Used twice: at ingest, to tag each passage with the laws it cites, and at query time, to recognise a
query that is nothing but a law address ("46B2", "art. 45 C 4 b") and to filter by law.

Why a tokenizer and a small grammar rather than one regex: references come in many shapes
(keywords in seven languages, Greek section letters, spaces, slashes and parentheses between
components, lists that continue only the last component as in "45C1,2 o 3", law ranges, a
"paragrafo E2" named after the law number), and bridge text is full of look-alikes (contracts "4H",
cards "10C", ordinals "12°", dates, scores "6♥-1"). Each decision is a small named rule below, so a
false positive can be traced to one rule and fixed there.

Canonical form: law number 1..93, section A-H (upper case), sub-paragraph 1-9, sub-sub letter a-e
(lower case), each present only if the previous one is: "45", "45C", "45C4", "45C4b".
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from kb.textnorm import fold

__all__ = [
    "LANGS",
    "RefMatch",
    "address_query",
    "ancestors",
    "canonical",
    "depth",
    "extends",
    "find_refs",
    "is_canonical",
    "parent",
    "parse_refs",
    "parts",
    "render",
    "sort_key",
]

MAX_LAW = 93
MAX_RANGE = 10  # "Laws 30-32" expands; a wider "range" is more likely a score or a board span.

# --------------------------------------------------------------------------------------------------
# Vocabulary (all words compared after textnorm.fold: case-, accent- and final-sigma-insensitive)
# --------------------------------------------------------------------------------------------------

_KEYWORDS_SINGULAR = frozenset({
    "law", "art", "articolo", "article", "artikel", "articulo", "regel", "regla", "gesetz", "ley", "loi", "wet",
    "νομοσ", "νομου", "νομο", "νομον", "αρθρο", "αρθρου",
})
_KEYWORDS_PLURAL = frozenset({
    "laws", "artt", "arts", "articoli", "articles", "artikelen", "articulos", "regeln", "regels", "gesetze",
    "leyes", "reglas", "lois", "wetten", "νομοι", "νομων", "νομουσ", "αρθρα", "αρθρων",
})
_KEYWORDS = _KEYWORDS_SINGULAR | _KEYWORDS_PLURAL

# Words that name a section of a law already cited: "Articolo 47 del Codice di Gara paragrafo E2".
_PARAGRAPH_WORDS = frozenset({
    "paragrafo", "paragrafi", "comma", "commi", "lettera", "punto", "sezione", "paragraph", "paragraphs",
    "para", "section", "subsection", "clause", "paragraphe", "alinea", "absatz", "abschnitt", "buchstabe",
    "apartado", "parrafo", "seccion", "lid", "onderdeel", "παραγραφοσ", "παραγραφο", "παραγραφου",
    "εδαφιο", "εδαφιου",
})
_MAX_FILLER = 5  # words allowed between the law number and the paragraph word ("del Codice di Gara")

# Conjunctions that join addresses in a list ("47D and 16D1", "62 e 63", "45 και 46").
_SEP_WORDS = frozenset({
    "and", "or", "e", "ed", "o", "od", "oppure", "και", "κι", "η", "et", "ou", "und", "oder", "sowie",
    "bzw", "y", "u", "en", "of",
})
_SEP_PUNCT = frozenset({",", "/", "&"})

# Words that make "A to B" a range; only after a plural keyword ("Laws 45 to 47", "artt. 45 a 47").
_RANGE_WORDS = frozenset({"to", "through", "thru", "a", "al", "bis", "hasta", "tot", "εωσ", "μεχρι"})

# A number after one of these counts something else: "Board 12A", "n° 12B", "page 45C".
_COUNTER_WORDS = frozenset({
    "board", "boards", "bd", "brd", "page", "pages", "pag", "pagina", "pagine", "p", "pp", "table",
    "tables", "tavolo", "tavoli", "room", "sala", "trick", "tricks", "presa", "prese", "round", "rounds",
    "turno", "n", "no", "nr", "num", "numero", "number", "fig", "figure", "figura", "tab", "tabella",
    "smazzata", "smazzate", "mano", "hand", "deal", "esempio", "example", "esercizio", "exercise",
    "problema", "problem", "seat", "posto", "pair", "pairs", "coppia", "team", "squadra", "tisch", "tafel",
    "mesa", "σελιδα", "διανομη", "τραπεζι",
})
_COUNTER_MARKS = frozenset({"°", "º", ".", ":", "#", "№"})

_ORDINAL_MARKS = frozenset({"°", "º", "ª", "%"})  # "12° presa", "50%": not law numbers
_NUMBER_PREFIXES = frozenset({"#", "№", "@", "$", "€", "£", "%", "°"})  # glued before a number: not a law
_NUMBER_JOINERS = frozenset({".", ",", "/", "-", ":", "+"})  # "1/4", "6-4C": a number glued to a number
_DASHES = frozenset("-\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d")
_APOSTROPHES = frozenset("'\u2019\u2018\u02bc")
_KEYWORD_GAP = frozenset({".", ":", "(", "§", "#", "°"})  # "art.. 47E", "ART.30", "§§ 45", "Law #45"
_NUMBER_ABBREVS = frozenset({"n", "no", "nr", "num"})  # "art. n. 45", "Artikel Nr. 45", "Law No. 45"

# Section letters that are also everyday words ("A player", Italian "E" = and, Greek "Η" = the):
# written apart from the number they only count as a section when nothing word-like follows.
_WORDLIKE_LETTERS = frozenset({"A", "E", "Η"})

_LATIN_SECTIONS = "ABCDEFGH"
_GREEK_SECTIONS = {"Α": "A", "Β": "B", "Γ": "C", "Δ": "D", "Ε": "E", "ΣΤ": "F", "Ϛ": "F", "Ζ": "G", "Η": "H"}
_LATIN_SUBS = "abcde"
_GREEK_SUBS = {"α": "a", "β": "b", "γ": "c", "δ": "d", "ε": "e"}
_SUIT_LETTERS = frozenset("CDHcdh")  # "4H", "5C", "3d": contracts, not laws

# --------------------------------------------------------------------------------------------------
# Tokenizer
# --------------------------------------------------------------------------------------------------

# Markdown emphasis and invisible characters are skipped without counting as a space, so
# "**45**C" reads as "45C" and "Law **45C4b**" as "Law 45C4b"; spans still index the original text.
_TOKEN_RE = re.compile(
    r"""
      (?P<space>\s+)
    | (?P<mark>[*_`~\u00ad\u200b-\u200d\u2060\ufeff]+)
    | (?P<num>[0-9]+)
    | (?P<word>(?:[^\W\d_][\u0300-\u036f]*)+)
    | (?P<punct>.)
    """,
    re.VERBOSE | re.DOTALL,
)


@dataclass(frozen=True, slots=True)
class _Tok:
    kind: str  # "num" | "word" | "punct"
    text: str
    start: int
    end: int
    spaced: bool  # whitespace (or start of text) before it
    key: str  # folded word / normalised punctuation, for vocabulary look-ups


def _punct_key(ch: str) -> str:
    if ch in _DASHES:
        return "-"
    if ch in _APOSTROPHES:
        return "'"
    return ch


def _tokenize(text: str) -> list[_Tok]:
    toks: list[_Tok] = []
    spaced = True
    for m in _TOKEN_RE.finditer(text):
        kind = m.lastgroup
        if kind == "space":
            spaced = True
            continue
        if kind == "mark":
            continue
        s = m.group()
        key = fold(s) if kind == "word" else _punct_key(s)
        toks.append(_Tok(kind, s, m.start(), m.end(), spaced, key))
        spaced = False
    return toks


def _section_letter(word: str) -> str | None:
    """Canonical section for a Latin (any case) or Greek section letter, else None."""
    if len(word) == 1 and word.isascii():
        up = word.upper()
        return up if up in _LATIN_SECTIONS else None
    return _GREEK_SECTIONS.get(word.upper()) if len(word) <= 2 else None


def _sub_letter(word: str) -> str | None:
    """Canonical sub-sub letter for a Latin or Greek letter a..e / α..ε, else None."""
    if len(word) != 1:
        return None
    low = word.lower()
    if word.isascii():
        return low if low in _LATIN_SUBS else None
    return _GREEK_SUBS.get(low)


# --------------------------------------------------------------------------------------------------
# Grammar
# --------------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Addr:
    """An address being parsed; start/end are token indices (end exclusive)."""

    law: int
    sec: str | None
    dig: int | None
    sub: str | None
    start: int
    end: int

    @property
    def ref(self) -> str:
        return _join(self.law, self.sec, self.dig, self.sub)


@dataclass(frozen=True, slots=True)
class _Hit:
    ref: str
    first: int  # token indices, end exclusive
    end: int


class _Parser:
    """Recursive-descent reader over tokens.

    address   := LAW [section [digit [sub]]]
    section   := LETTER glued | "/" LETTER | LETTER spaced (upper case, guarded)
    digit     := 1-9 glued or spaced (guarded)       sub := letter | "(" letter ")"
    reference := KEYWORD gap address [paragraph] list | bare-address list
    list      := (range | separators item)*          item := address | continuation of the last component
    `loose` (for `canonical`) drops the guards that only exist to reject look-alikes in running text.
    """

    def __init__(self, text: str, loose: bool = False, max_range: int = MAX_RANGE) -> None:
        self.toks = _tokenize(text)
        self.loose = loose
        self.max_range = max_range

    def at(self, i: int) -> _Tok | None:
        return self.toks[i] if 0 <= i < len(self.toks) else None

    def _is(self, i: int, kind: str, keys: frozenset[str] | str | None = None) -> bool:
        t = self.at(i)
        return t is not None and t.kind == kind and (keys is None or t.key in keys)

    def _glued(self, i: int) -> bool:
        t = self.at(i)
        return t is not None and not t.spaced

    # -- components ---------------------------------------------------------------------------------

    def law_number(self, i: int) -> int | None:
        """1..93 written with one or two digits, not an ordinal, decimal or time."""
        t = self.at(i)
        if t is None or t.kind != "num" or len(t.text) > 2 or t.text.startswith("0"):
            return None
        n = int(t.text)
        if n > MAX_LAW:
            return None
        if self._glued(i + 1) and self._is(i + 1, "punct"):
            nxt = self.at(i + 1)
            assert nxt is not None
            if nxt.key in _ORDINAL_MARKS:
                return None
            if nxt.key in ".:" and self._is(i + 2, "num") and self._glued(i + 2):
                return None
        return n

    def address(self, i: int, keyworded: bool) -> _Addr | None:
        """The longest address starting with a law number at token i, or None."""
        law = self.law_number(i)
        if law is None:
            return None
        nxt = self.at(i + 1)
        # A number glued to letters that are no section ("3SA", "30cm", "5th", "99Z") is not a law.
        if nxt is not None and nxt.kind == "word" and not nxt.spaced and _section_letter(nxt.text) is None:
            return None
        a = _Addr(law, None, None, None, i, i + 1)
        self.take_section(a, keyworded)
        self.take_digit(a)
        self.take_sub(a)
        return a

    def _dot_joined(self, j: int) -> bool:
        """'16.B.1.a': a dot with no space on either side joins components like no dot at all."""
        nxt = self.at(j + 1)
        return self._is(j, "punct", ".") and self._glued(j) and nxt is not None and not nxt.spaced

    def _slash_joined(self, j: int) -> bool:
        """'art.45/C/4/b': past the section, a slash glued on both sides joins components like a dot."""
        nxt = self.at(j + 1)
        return self._is(j, "punct", "/") and self._glued(j) and nxt is not None and not nxt.spaced

    def take_section(self, a: _Addr, keyworded: bool) -> None:
        """Extend a bare law number with its section letter, if one follows in an accepted form."""
        j = a.end
        if self._dot_joined(j):  # "16.B1", but not "45.E il" (a sentence run together)
            w, after = self.at(j + 1), self.at(j + 2)
            sec = _section_letter(w.text) if w is not None and w.kind == "word" else None
            if sec is not None and not (after is not None and after.spaced and after.kind == "word"):
                a.sec, a.end = sec, j + 2
            return
        t = self.at(j)
        if t is None:
            return
        if t.kind == "punct" and t.key == "/":  # "72/B1", "16/C"
            w = self.at(j + 1)
            if w is not None and w.kind == "word" and (sec := _section_letter(w.text)):
                a.sec, a.end = sec, j + 2
            return
        if t.kind != "word" or (sec := _section_letter(t.text)) is None:
            return
        if not t.spaced or self.loose or (t.text.isupper() and self._spaced_section_ok(j, keyworded)):
            a.sec, a.end = sec, j + 1

    def _spaced_section_ok(self, j: int, keyworded: bool) -> bool:
        """'45 C 4', '46 B1', but not 'Law 45 A player' or 'ART. 45 E 46'."""
        if self._is(j + 1, "num") and self._glued(j + 1):
            return True
        if not keyworded:
            return False
        letter = self.toks[j].text
        nxt = self.at(j + 1)
        if letter in _WORDLIKE_LETTERS:
            if nxt is not None and nxt.kind == "num" and len(nxt.text) == 1 and nxt.text != "0":
                # "Art. 73 E 1: ...", "43 A 2 b", "73 E 2 e 73 F": a sub-paragraph digit follows; not "45 E 46"
                # (a list) nor "45 A 2 tricks" (a count)
                after = self.at(j + 2)
                return (after is None or after.kind == "punct" or after.key in _SEP_WORDS
                        or (len(after.text) == 1 and _sub_letter(after.text) is not None))
            return nxt is None or nxt.kind == "punct"
        return True

    def take_digit(self, a: _Addr) -> None:
        """Extend a section with its sub-paragraph digit 1-9 ('45C4', '43B 2c', '16.B.1')."""
        if a.sec is None:
            return
        j = a.end + 1 if self._dot_joined(a.end) or self._slash_joined(a.end) else a.end
        if self._paren_digit(j) and not (a.law <= 7 and a.sec in "CDH"):  # "64A(1)", "16B(1)(a)"; not "3C(2)"
            a.dig, a.end = int(self.toks[j + 1].text), j + 3
            return
        t = self.at(j)
        if t is None or t.kind != "num" or len(t.text) != 1 or t.text == "0":
            return
        nxt = self.at(j + 1)
        if nxt is not None and not nxt.spaced and nxt.kind == "punct" and nxt.key in _ORDINAL_MARKS:
            return
        if t.spaced and not self.loose and nxt is not None and nxt.kind == "word":
            if not nxt.spaced and _sub_letter(nxt.text) is None:  # "45C 2nd"
                return
            if nxt.spaced and len(nxt.text) > 1 and nxt.key not in _SEP_WORDS:  # "45C 2 tricks"
                return
        a.dig, a.end = int(t.text), j + 1

    def take_sub(self, a: _Addr) -> None:
        """Extend a sub-paragraph with its letter ('45C4b', '45C4(b)', '45 C 4 b', 'Γ4β')."""
        if a.dig is None:
            return
        j = a.end
        sub = self._paren_sub(j)
        if sub is not None:
            a.sub, a.end = sub, j + 3
            return
        if self._dot_joined(j) or self._slash_joined(j):
            j += 1
        t = self.at(j)
        if t is None or t.kind != "word" or (sub := _sub_letter(t.text)) is None:
            return
        if not t.spaced or self.loose or (t.text.islower() and (self._boundary(j + 1, strict=True)
                                                                 or self._joins_next_address(j + 1))):
            a.sub, a.end = sub, j + 1

    def _joins_next_address(self, j: int) -> bool:
        """A conjunction then a number at token j: "45 C 4 b e 46 B" lists two addresses."""
        t = self.at(j)
        return t is not None and t.kind == "word" and t.key in _SEP_WORDS and self._is(j + 1, "num")

    def _paren_digit(self, j: int) -> bool:
        """'(1)' glued to a section letter: '64A(1)'."""
        t = self.at(j + 1)
        return (self._is(j, "punct", "(") and self._glued(j) and t is not None and t.kind == "num"
                and len(t.text) == 1 and t.text != "0" and self._is(j + 2, "punct", ")"))

    def _paren_sub(self, j: int) -> str | None:
        """'(b)' as a sub-sub letter: '45C4(b)', '43/B2(b)'."""
        if not (self._is(j, "punct", "(") and self._is(j + 1, "word") and self._is(j + 2, "punct", ")")):
            return None
        w = self.toks[j + 1]
        return _sub_letter(w.text) if (w.text.islower() or self.loose) else None

    def _boundary(self, j: int, strict: bool = False) -> bool:
        """Does an item end cleanly before token j? (end, punctuation, or — unless strict — a conjunction)."""
        t = self.at(j)
        if t is None or t.kind == "punct":
            return True
        return not strict and t.kind == "word" and (t.key in _SEP_WORDS or t.key in _KEYWORDS)

    # -- keyword, paragraph, list -------------------------------------------------------------------

    def keyword_at(self, i: int) -> tuple[int, bool] | None:
        """If a law keyword starts at token i: (index of its law number, keyword is plural)."""
        t = self.at(i)
        if t is None:
            return None
        if t.kind == "word" and t.text == "L":  # "L45c4a", "L.45": only glued to the number
            if self._is(i + 1, "num") and self._glued(i + 1):
                return i + 1, False
            dotted = self._is(i + 1, "punct", ".") and self._glued(i + 1)
            if dotted and self._is(i + 2, "num") and self._glued(i + 2):
                return i + 2, False
            return None
        if t.kind == "word" and t.key == "ν":  # "Ν. 45Γ4β", "ν.45Γ": Greek abbreviates Law as Ν., always dotted
            if not self._is(i + 1, "punct", ".") or not self._glued(i + 1):
                return None
            plural = False
        elif t.kind == "word" and t.key in _KEYWORDS:
            plural = t.key in _KEYWORDS_PLURAL
        elif t.kind == "punct" and t.key == "§":
            plural = self._is(i + 1, "punct", "§")
        else:
            return None
        j = i + 1
        while j - i <= 4 and (self._is(j, "punct", _KEYWORD_GAP) or self._is(j, "word", _NUMBER_ABBREVS)):
            j += 1
        return (j, plural) if self._is(j, "num") else None

    def take_paragraph(self, a: _Addr) -> None:
        """'Articolo 47 del Codice di Gara paragrafo E2': a section named a few words after the number."""
        if a.sec is not None:
            return
        j = a.end
        for _ in range(_MAX_FILLER + 1):
            t = self.at(j)
            if t is None:
                return
            if t.kind == "word" and t.key in _PARAGRAPH_WORDS:
                break
            filler_word = t.kind == "word" and t.key not in _KEYWORDS and t.key not in _SEP_WORDS
            if not (filler_word or (t.kind == "punct" and t.key in ",'")):
                return
            j += 1
        else:
            return
        j += 1
        if self._is(j, "punct", ".:"):
            j += 1
        w = self.at(j)
        if w is None or w.kind != "word" or not w.text.isupper() or (sec := _section_letter(w.text)) is None:
            return
        a.sec, a.end = sec, j + 1
        self.take_digit(a)
        self.take_sub(a)

    def separators(self, j: int) -> int:
        """End of the run (at most 3) of list separators starting at j: ',', '/', '&', 'and', 'e', 'και'..."""
        k = j
        while k - j < 3 and (self._is(k, "punct", _SEP_PUNCT) or self._is(k, "word", _SEP_WORDS)):
            k += 1
        return k

    def law_range(self, prev: _Addr, j: int, plural: bool) -> _Addr | None:
        """'Laws 30-32', 'Νόμους 45–47', 'Laws 45 to 47' (word ranges need a plural keyword)."""
        if not (self._is(j, "punct", "-") or (plural and self._is(j, "word", _RANGE_WORDS))):
            return None
        end = self.address(j + 1, keyworded=True)
        if end is None or end.sec is not None or not prev.law < end.law < prev.law + self.max_range:
            return None
        return end

    def digit_range(self, prev: _Addr, j: int) -> _Addr | None:
        """'Law 45C1-3': sub-paragraphs 1 to 3 of 45C."""
        if prev.dig is None or prev.sub is not None or not self._is(j, "punct", "-"):
            return None
        t = self.at(j + 1)
        if t is None or t.kind != "num" or len(t.text) != 1 or not prev.dig < int(t.text):
            return None
        if self._glued(j + 2) and not self._is(j + 2, "punct"):  # "45C1-3rd"
            return None
        return _Addr(prev.law, prev.sec, int(t.text), None, j + 1, j + 2)

    def item(self, prev: _Addr, j: int, k: int, keyworded: bool, plural: bool) -> _Addr | None:
        """One list item after separators j..k: a new address, or a continuation of prev's last component."""
        t = self.at(k)
        if t is None:
            return None
        if t.kind == "num":
            if prev.dig is not None and self._digit_continues(k):
                a = _Addr(prev.law, prev.sec, int(t.text), None, k, k + 1)  # "45C1,2 o 3", "45C1a, 2b"
                self.take_sub(a)
                return a if self._boundary(a.end) else None
            a = self.address(k, keyworded)
            if a is None:
                return None
            if a.sec is None:
                return a if keyworded and self._plain_item_ok(a, j, k, plural) else None
            if not keyworded and (self._contract_like(a) or self._ragged_tail(a)):
                return None
            return a
        sec = _section_letter(t.text) if t.kind == "word" and t.text.isupper() else None
        if sec is not None and prev.sec is not None:
            a = _Addr(prev.law, sec, None, None, k, k + 1)  # "paragrafo F2 e F3", "46B and C"
            self.take_digit(a)
            self.take_sub(a)
            return a if a.dig is not None or self._boundary(a.end) else None
        if prev.sub is not None:
            sub = self._paren_sub(k)
            if sub is not None:
                return _Addr(prev.law, prev.sec, prev.dig, sub, k, k + 3)  # "45C4(a) or (b)"
            sub = _sub_letter(t.text) if t.kind == "word" and t.text.islower() else None
            if sub is not None and self._boundary(k + 1):
                return _Addr(prev.law, prev.sec, prev.dig, sub, k, k + 1)  # "45C4a o b"
        return None

    def _plain_item_ok(self, a: _Addr, j: int, k: int, plural: bool) -> bool:
        """A bare law number in a list: 'Laws 45, 46 apply', 'Law 53 or 56 applies', but not 'L45D, 5 carte'.

        After a singular keyword, a number joined only by a comma and followed by a word counts something.
        """
        if plural or self._boundary(a.end):
            return True
        return any(self.toks[x].kind == "word" for x in range(j, k))

    def _digit_continues(self, k: int) -> bool:
        """After '45C1,' a lone digit (optionally with a lower-case letter, '2b') is sub-paragraph 2."""
        t = self.toks[k]
        if len(t.text) != 1 or t.text == "0":
            return False
        nxt = self.at(k + 1)
        if nxt is None or nxt.spaced or nxt.kind != "word":
            return True
        return nxt.text.islower() and _sub_letter(nxt.text) is not None

    def read_list(self, first: _Addr, keyworded: bool, plural: bool, start: int) -> tuple[list[_Hit], int]:
        """Hits for `first` and every item or range listed after it, and the token index ending the list."""
        hits = [_Hit(first.ref, start, first.end)]
        prev, j = first, first.end
        while True:
            if keyworded and prev.sec is None and (end := self.law_range(prev, j, plural)) is not None:
                span_start = hits[-1].first
                hits.extend(_Hit(str(n), span_start, end.end) for n in range(prev.law + 1, end.law + 1))
                prev, j = end, end.end
                continue
            if (end := self.digit_range(prev, j)) is not None:
                span_start = hits[-1].first
                first_dig, last_dig = prev.dig or 0, end.dig or 0
                hits.extend(
                    _Hit(_join(prev.law, prev.sec, d, None), span_start, end.end)
                    for d in range(first_dig + 1, last_dig + 1)
                )
                prev, j = end, end.end
                continue
            # Try the longest run of separators first, then shorter ones: in "45C, D and E" the
            # final "E" is a section, not the Italian conjunction.
            nxt = None
            for k in range(self.separators(j), j, -1):
                nxt = self.item(prev, j, k, keyworded, plural)
                if nxt is not None:
                    break
            if nxt is None:
                break
            hits.append(_Hit(nxt.ref, nxt.start, nxt.end))
            prev, j = nxt, nxt.end
        return hits, j

    # -- bare references (no keyword) ---------------------------------------------------------------

    def _contract_like(self, a: _Addr) -> bool:
        """'4H', '5C', '3d': a level 1-7 with a suit letter and nothing more is a contract."""
        letter = self.at(a.start + 1)
        return a.dig is None and a.law <= 7 and letter is not None and letter.text in _SUIT_LETTERS

    def _ragged_tail(self, a: _Addr) -> bool:
        """'12h30', '45C4bis': letters or digits glued after the address mean it was something else."""
        nxt = self.at(a.end)
        return nxt is not None and not nxt.spaced and nxt.kind in ("word", "num")

    def bare_start_ok(self, i: int) -> bool:
        """A bare number may start a reference unless glued to a word/number or after a counter word."""
        t = self.toks[i]
        p = self.at(i - 1)
        if p is None:
            return True
        if not t.spaced:
            if p.kind in ("word", "num"):
                return False
            if p.key in _NUMBER_PREFIXES:  # "#45C", "€45", "n°12B"
                return False
            if p.key in _NUMBER_JOINERS and self._is(i - 2, "num") and not p.spaced:
                return False  # "1/4", "2.45C", "6-4C"
        q = p
        if q.kind == "punct" and q.key in _COUNTER_MARKS:
            q = self.at(i - 2)
        if q is not None and q.kind == "word" and q.key in _COUNTER_WORDS:
            # "No. 12B"/"n° 12B" number something; a bare "No 45E2" answers a question.
            return q.text.lower() == "no" and q is p
        return True

    def bare_ok(self, a: _Addr) -> bool:
        """A bare address needs a section, and single-digit laws also a sub-paragraph ('4H', '10C', '5G').

        A lower-case letter glued to the number with nothing after it is an ordinal ("στη 12η λεβέ",
        "à la 12e levée", "alla 12a presa"), not section H, E or A; "45c4b" still reads."""
        if a.sec is None or (a.law <= 10 and a.dig is None):
            return False
        if a.dig is None and self.toks[a.start + 1].text.islower():
            return False
        return not self._ragged_tail(a)

    # -- driver -------------------------------------------------------------------------------------

    def scan(self) -> tuple[list[_Hit], list[tuple[int, int]]]:
        """All references in order, and the token ranges they cover."""
        hits: list[_Hit] = []
        covered: list[tuple[int, int]] = []
        i = 0
        while i < len(self.toks):
            kw = self.keyword_at(i)
            if kw is not None:
                j, plural = kw
                a = self.address(j, keyworded=True)
                if a is not None:
                    self.take_paragraph(a)
                    new, end = self.read_list(a, True, plural, i)
                    hits.extend(new)
                    covered.append((i, end))
                    i = end
                    continue
            elif self.toks[i].kind == "num" and self.bare_start_ok(i):
                a = self.address(i, keyworded=False)
                if a is not None and self.bare_ok(a):
                    new, end = self.read_list(a, False, False, i)
                    hits.extend(new)
                    covered.append((i, end))
                    i = end
                    continue
            i += 1
        return hits, covered


# --------------------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RefMatch:
    """A canonical law reference and the [start, end) character span of the text it was read from."""

    ref: str
    start: int
    end: int


def find_refs(text: str) -> list[RefMatch]:
    """Every law reference in `text`, in order of appearance, one per occurrence (tagging, highlighting)."""
    p, hits, _ = _scanned(text) if len(text) <= 2000 else _scan(text)
    return [RefMatch(h.ref, p.toks[h.first].start, p.toks[h.end - 1].end) for h in hits]


def _scan(text: str) -> tuple[_Parser, list[_Hit], list[tuple[int, int]]]:
    p = _Parser(text)
    hits, covered = p.scan()
    return p, hits, covered


# A search parses its query several times (references, address-only check, hints): short texts cached.
_scanned = functools.lru_cache(maxsize=1024)(_scan)


def parse_refs(text: str) -> list[str]:
    """Canonical references in order of first appearance, de-duplicated (the passage's law tags)."""
    return list(dict.fromkeys(m.ref for m in find_refs(text)))


def scope_of(title: str) -> list[str]:
    """The laws a document's title says it covers. "Art. 30-64" is Laws 30 to 64 here: in running text a
    range that wide is more likely a score or a span of boards (MAX_RANGE), in a title it is the scope."""
    hits, _ = _Parser(title, max_range=100).scan()
    return list(dict.fromkeys(h.ref for h in hits))


def canonical(s: str) -> str | None:
    """Canonical form of ONE loosely written address ("art. 45 C 4 b", "Νόμος 45Γ4β"), else None.

    The caller asserts the string is an address, so the look-alike guards of running text
    (contracts, spaced lower-case letters) are off; surrounding punctuation is ignored.
    """
    p = _Parser(s, loose=True)
    i = 0
    while p._is(i, "punct") and not p.keyword_at(i):
        i += 1
    kw = p.keyword_at(i)
    if kw is not None:
        i = kw[0]
    a = p.address(i, keyworded=True)
    if a is None:
        return None
    p.take_paragraph(a)
    if any(t.kind != "punct" for t in p.toks[a.end:]):
        return None
    return a.ref


def address_query(q: str) -> list[str] | None:
    """The addresses a query consists of ("Laws 47D and 16D1" → ["47D", "16D1"]), or None if it says more.

    A query that is only addresses should jump to those laws rather than go through text search.
    """
    p, hits, covered = _scanned(q) if len(q) <= 2000 else _scan(q)
    if hits:
        inside = {k for a, b in covered for k in range(a, b)}
        for k, t in enumerate(p.toks):
            if k in inside or t.kind == "punct":
                continue
            if t.kind == "word" and (t.key in _SEP_WORDS or t.key in _KEYWORDS):
                continue
            return None
        return list(dict.fromkeys(h.ref for h in hits))
    # "45 c 4 b": spaced lower case is too ambiguous in prose, but a whole query deep enough to
    # have a sub-paragraph is unmistakably an address. (One address is a handful of words, even written
    # out: "Article 45 section C paragraph 4 b". A longer question is not parsed again to learn that.)
    if len(q.split()) > 12:
        return None
    c = canonical(q)
    return [c] if c is not None and depth(c) >= 3 else None


_CANONICAL_RE = re.compile(r"([1-9][0-9]?)(?:([A-H])(?:([1-9][0-9]?)([a-e])?)?)?")


@functools.lru_cache(maxsize=1 << 16)
def parts(ref: str) -> tuple[int, str | None, int | None, str | None]:
    """(law, section, sub-paragraph, sub-sub letter) of a canonical ref; ValueError if not canonical.

    Sub-paragraphs of two digits are accepted here so that ordering stays numeric ("45C2" < "45C10").
    Cached: ranking asks for the same few hundred addresses thousands of times per search.
    """
    m = _CANONICAL_RE.fullmatch(ref)
    if m is None or int(m.group(1)) > MAX_LAW:
        raise ValueError(f"not a canonical law reference: {ref!r}")
    law, sec, dig, sub = m.groups()
    return int(law), sec, int(dig) if dig else None, sub


def is_canonical(ref: str) -> bool:
    """True for a canonical ref as the parser produces them (sub-paragraph 1-9)."""
    try:
        _, _, dig, _ = parts(ref)
    except ValueError:
        return False
    return dig is None or dig <= 9


def _join(law: int, sec: str | None, dig: int | None, sub: str | None) -> str:
    return f"{law}{sec or ''}{dig if dig is not None else ''}{sub or ''}"


@functools.lru_cache(maxsize=1 << 16)
def depth(ref: str) -> int:
    """1 for a law, 2 for a section, 3 for a sub-paragraph, 4 for a sub-sub letter."""
    return sum(c is not None for c in parts(ref))


def parent(ref: str) -> str | None:
    """The enclosing address ("45C4b" → "45C4" → "45C" → "45" → None)."""
    comps = list(parts(ref))
    d = depth(ref)
    if d == 1:
        return None
    comps[d - 1] = None
    return _join(*comps)


def ancestors(ref: str) -> list[str]:
    """All enclosing addresses from the law number down, excluding ref itself."""
    return list(_ancestors(ref))


@functools.lru_cache(maxsize=1 << 16)
def _ancestors(ref: str) -> tuple[str, ...]:
    out: list[str] = []
    p = parent(ref)
    while p is not None:
        out.append(p)
        p = parent(p)
    return tuple(out[::-1])


@functools.lru_cache(maxsize=1 << 16)
def extends(ref: str, prefix: str) -> bool:
    """Component-wise prefix test: '45C4b' extends '45C4', '45C', '45' and itself; '45' not '4'."""
    r, p = parts(ref), parts(prefix)
    return all(pc is None or pc == rc for pc, rc in zip(p, r, strict=True)) and depth(prefix) <= depth(ref)


def sort_key(ref: str) -> tuple[int, str, int, str]:
    """Numeric document order: 9 < 45 < 45A < 45C < 45C2 < 45C10 < 45C10a < 46."""
    law, sec, dig, sub = parts(ref)
    return law, sec or "", dig or 0, sub or ""


LANGS = ("en", "it", "el", "fr", "de", "es", "nl")
_LANG_KEYWORD = {
    "en": "Law", "it": "art.", "el": "Νόμος", "fr": "Loi", "de": "Regel", "es": "Ley", "nl": "Wet",
}
_GREEK_OF_SECTION = {v: k for k, v in _GREEK_SECTIONS.items() if k != "Ϛ"}
_GREEK_OF_SUB = {v: k for k, v in _GREEK_SUBS.items()}


def render(ref: str, lang: str) -> str:
    """How a document in `lang` writes the address: en 'Law 45C4(b)', it 'art. 45C4b', el 'Νόμος 45Γ4β'."""
    if lang not in _LANG_KEYWORD:
        raise ValueError(f"unsupported language: {lang!r}")
    law, sec, dig, sub = parts(ref)
    if lang == "el":
        body = _join(law, _GREEK_OF_SECTION[sec] if sec else None, dig, _GREEK_OF_SUB[sub] if sub else None)
    elif lang == "en" and sub:
        body = f"{_join(law, sec, dig, None)}({sub})"
    else:
        body = ref
    return f"{_LANG_KEYWORD[lang]} {body}"
