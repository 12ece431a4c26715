"""Multilingual glossary of the concepts a tournament director uses to describe a table situation.

The data lives in the ``*.toml`` files of this folder (one ``[[concept]]`` table per idea, with terms in
Italian, English and Greek, and optionally French, German, Spanish and Dutch). This module loads and
validates it and finds concepts in free text:

* :meth:`Glossary.match` returns the concept mentions of a text, longest match first, non-overlapping,
  on word boundaries, with spans into the original text. Matching goes through :func:`kb.textnorm.fold`
  (case, accents, Greek tonos and final sigma do not matter) and tolerates short inflectional endings
  (``carta``/``carte``, ``dichiarante``/``dichiaranti``, ``εκτελεστής``/``εκτελεστές``).
* A card named with a suit symbol and its determiner ("el 8♥", "the ♠K") stands for "a card" / "the card"
  in terms ("se le cayó una carta" matches "se le cayó el 8♥").
* :attr:`Glossary.for_questions` (:func:`question_glossary`) reads a director's question: there a term
  of three or more words may hold one extra word ("wants to change his lead card"). Passages are
  matched word for word.
* :meth:`Glossary.expand` renders the concepts of a query in other languages (cross-language retrieval).
* :meth:`Glossary.concept_ids` lists the concepts of a passage (indexing passages by concept).

Terms flagged weak (a whole concept with ``weak = true``, or single ambiguous terms in ``weak_terms``)
are still matched, so that they cannot be split into wrong shorter matches, but the hits are marked
``weak`` and left out of :meth:`~Glossary.expand` and :meth:`~Glossary.concept_ids` by default, unless
the same text has a strong mention of a concept under the same law number: context decides an ambiguous
phrase ("pur avendone" beside "non ha risposto", Law 61, is the revoke of Laws 61-64).
"""

from __future__ import annotations

import copy
import re
import tomllib
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path

from kb import lawref
from kb.textnorm import fold

__all__ = [
    "LANGS",
    "REQUIRED_LANGS",
    "Concept",
    "ConceptHit",
    "Glossary",
    "GlossaryError",
    "default_glossary",
    "question_glossary",
]

LANGS: tuple[str, ...] = ("it", "en", "el", "fr", "de", "es", "nl")
REQUIRED_LANGS: tuple[str, ...] = ("it", "en", "el")
GLOSSARY_DIR = Path(__file__).resolve().parent

LAW_RE = re.compile(r"^\d{1,2}([A-H](\d([a-e])?)?)?$")
ID_RE = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$")
_CONCEPT_KEYS = frozenset({"id", "laws", "weak", "weak_terms", "broader", "implied_by", "implied_reach", "routine",
                           "overrides", *LANGS})
_IMPLIED_GAP = 5  # words allowed between the parts of an implied concept ("doubled before his turn")
_REACH_WORDS = 30  # ... and, per sentence end allowed, between the parts of one whose implied_reach lets them lie apart
# Words that join two clauses: parts on either side of one belong to different events ("1♠ was out of turn
# and East passed" is no pass out of turn).
_CLAUSE_JOINS = frozenset(fold(w) for w in {"and", "but", "then", "while", "e", "ed", "ma", "poi", "mentre", "και", "αλλά", "μετά",
                           "ενώ", "et", "mais", "puis", "und", "aber", "dann", "y", "pero", "luego", "maar"})

# A word: a letter or digit followed by letters, digits or (decomposed) combining accents. Apostrophes,
# hyphens and punctuation separate words, so "d'attacco" is ["d", "attacco"] in text and terms alike.
_TOKEN = re.compile(r"[^\W_](?:[^\W_]|[\u0300-\u036f])*")

# Inflection tolerance: a term word of at least _FUZZY_MIN_LEN letters also matches a text word that
# shares a prefix of at least max(_STEM_MIN, len(word) - _MAX_ENDING) letters, when the two remaining
# endings are at most _MAX_ENDING letters long, made of ending-like letters, and look like an inflection
# (see _fuzzy_eq): carta/carte, φύλλο/φύλλου, εκτελεστής/εκτελεστές/εκτελεστή match; presa/presso,
# player/play, giocatore/giocato, claim/clair, Geste/Gestern do not.
_FUZZY_MIN_LEN = 5
_STEM_MIN = 4
_MAX_ENDING = 2
_ENDING_CHARS = frozenset("aeiouyhsdnr" "αεηιουωσν")
_VOWELS = frozenset("aeiouyh" "αεηιουω")
_DROPPABLE = frozenset({"s", "σ"})
_CACHE_MAX = 100_000  # folded tokens whose candidate entries are remembered
_GROWTH_FINALS = frozenset("sn" "σν")
# Read as a question (Glossary.for_questions), a term of at least _GAP_MIN_WORDS words still matches
# with one extra text word inside it: directors paraphrase ("wants to change his lead card" for "change
# his card", "l'attacco è già stato scoperto" for "attacco scoperto"). Shorter terms match word for word
# ("penalty card" is not "penalty … card"), a word-for-word match starting at the same word wins, and a
# negation is never the word skipped ("revoke was not established" is not "revoke was established").
# Passages are indexed word for word: over long texts a gap mostly finds chance phrases (measured:
# gaps on both sides lost a tune2 question that gaps on questions alone keep).
_QUESTION_GAP = 1
_GAP_MIN_WORDS = 3


# What did NOT happen ("no revoke", "non c'è renonce", "pas de renonce", "kein Revoke") must not pull a
# search towards its laws. A concept is negated when a negating determiner stands right before it
# (articles may come between), or a negated copula ("is not a", "non c'è", "il n'y a pas de").
# Negated verbs ("did not lead") and "without" ("senza nominare la carta", "χωρίς χρώμα") are left
# alone: there the missing action is usually the irregularity itself (an incomplete designation).
_NO = frozenset(fold(w) for w in (
    "no nessun nessuna nessuno κανένα καμία κανένας aucun aucune kein keine keinen keiner keinem ningún "
    "ninguna geen").split())
_NOT = frozenset(fold(w) for w in "not non δεν pas nicht niet no".split())
_BE = frozenset(fold(w) for w in (
    "is was were be been c è ci era fu stata stato sono υπάρχει υπήρξε ήταν είναι y a ist war gibt gab es hay "
    "hubo había fue er est était está estaba").split())
_ARTICLES = frozenset(fold(w) for w in (
    "a an any the un una uno une des de d du la il lo l le les ein eine einen einem der die das el los las "
    "ένα μια ενός το η ο een het").split())
# "Yet" and "still" between a negation and what it negates: "not yet established", "non è ancora consumata",
# "n'est pas encore consommée", "noch nicht" (before), "todavía no".
_YET = frozenset(fold(w) for w in "yet still ancora encore noch todavía aún ακόμα ακόμη nog".split())
_BEFORE_NEGATED = _ARTICLES | _BE | _YET  # words that may stand between a negation and its concept
# A card named with a suit symbol ("the ♥8", "el 8♥", "il ♠K"), with the determiner right before it, is
# "a card" to the glossary: terms say "dropped a card", "ha girato la carta"; narratives name the card.
# Such a mention becomes one stand-in word in the text, and each term with a determiner + a word for
# "card" gets a variant with the stand-in in their place.
CARD_WORD = "ꝏ"  # a letter no text in these languages uses
_DETERMINERS = _ARTICLES | frozenset(fold(w) for w in (
    "his her my your sua suo mia tua του της μου σου sa son ma ta sein seine seinen ihre meine su mi tu zijn "
    "haar mijn den dem").split())
# Words a term may be said with in place of the word it was written with: the first word of each group
# stands for the others, in terms and texts alike. A term written "η λεβέ ήταν του συμπαίκτη του" then
# also reads "η λεβέ ήταν του παρτενέρ μου", and "took his card back" reads "took my card back": players
# tell stories about themselves, the glossary mostly writes about a third person. Only words of one
# language with no other reading in another (French "ma" and "sa" are Italian words; Spanish "mi" and
# "tu" too) are grouped, and not "your": "your lead" is what one is told. Inflected forms pair with
# forms of the same case (seinen, meinen, ihren).
_SAME_WORDS = (
    "his her my their", "συμπαίκτης παρτενέρ σύντροφος", "συμπαίκτη παρτενερ συντρόφου σύντροφο", "του μου",
    "φύλλο χαρτί κάρτα", "φύλλα χαρτιά κάρτες", "φύλλου χαρτιού κάρτας", "suo mio", "sua mia", "suoi miei",
    "sue mie", "compagno partner pard", "son mon", "ses mes", "sein mein", "seine meine ihre", "seinen meinen ihren",
    "seinem meinem ihrem", "seiner meiner ihrer", "compañero pareja", "compañera pareja",
)
_SAME_WORD: dict[str, str] = {}
for _group in _SAME_WORDS:
    _head, *_rest = (fold(w) for w in _group.split())
    for _w in _rest:
        _SAME_WORD.setdefault(_w, _head)
_CARD_WORDS = frozenset(fold(w) for w in "card carta cartas φύλλο χαρτί carte karte naipe kaart".split())
_RANK = r"(?:10|[2-9AKQJTRDVFBakqj])"
_CARD_MENTION = re.compile(rf"(?<![\w♠♥♦♣])(?:[♠♥♦♣]\s?{_RANK}|{_RANK}\s?[♠♥♦♣])(?![\w♠♥♦♣])")
_SENTENCE_BREAK = re.compile(r"[.,;:!?()\"«»\u2013\u2014]")
_UNSKIPPABLE = _NO | _NOT | frozenset(fold(w) for w in (
    "without senza χωρίς sans ohne sin zonder never mai ποτέ jamais nie nunca nooit").split())


def _negated(toks: list[tuple[int, int, str]], i: int, text: str) -> bool:
    """Whether the concept starting at token ``i`` is negated (see _NO, _NOT)."""
    j, between = i - 1, []
    while j >= 0 and len(between) < 3 and toks[j][2] in _BEFORE_NEGATED:
        between.append(toks[j][2])
        j -= 1
    if j < 0 or _SENTENCE_BREAK.search(text, toks[j][1], toks[i][0]):
        return False
    cue = toks[j][2]
    if cue in _NO and not any(w in _BE for w in between):
        return True
    if cue in _NOT:
        return any(w in _BE for w in between) or (j > 0 and toks[j - 1][2] in _BE)
    return False


class GlossaryError(ValueError):
    """Invalid glossary data; the message names the file and the concept."""


@dataclass(frozen=True)
class Concept:
    """One idea, with its terms per language (``terms[lang]`` is a tuple, most usual form first)."""

    id: str
    laws: tuple[str, ...]
    terms: dict[str, tuple[str, ...]] = field(hash=False)
    weak: bool = False
    weak_terms: frozenset[str] = frozenset()  # folded terms that are ambiguous on their own
    broader: tuple[str, ...] = ()  # ids of more general concepts
    implied_by: tuple[tuple[str, ...], ...] = ()  # groups of concepts that, said together, say this one
    implied_reach: int = 0  # sentence ends allowed between those parts (0: one clause, a few words apart)
    overrides: tuple[str, ...] = ()  # concepts whose laws it makes irrelevant when both are said
    routine: bool = False  # ordinary play or setting ("a lead", "from dummy"): context, not the irregularity

    def is_weak_term(self, term: str) -> bool:
        return self.weak or _fold_term(term) in self.weak_terms

    @cached_property
    def law_numbers(self) -> frozenset[str]:
        """The law numbers of :attr:`laws` ("64A1" -> "64")."""
        return frozenset(re.match(r"\d+", law).group() for law in self.laws)


@dataclass(frozen=True)
class ConceptHit:
    """A mention of ``concept`` in a text: ``text[start:end]`` is the matched span of the original text."""

    concept: Concept
    lang: str
    term: str
    start: int
    end: int
    weak: bool = False
    negated: bool = False  # "no revoke": what did not happen (see _negated)


@dataclass(frozen=True)
class _Target:
    concept: Concept
    lang: str
    term: str
    weak: bool


class _Node:
    """A trie node: one folded word further along some terms; ``targets`` when a term ends here."""

    __slots__ = ("children", "depth", "fuzzy", "targets")

    def __init__(self, depth: int = 0) -> None:
        self.depth = depth  # term words from the root to here
        self.children: dict[str, _Node] = {}
        # children whose word may be inflected, keyed by the word's first _fuzzy_key_len letters
        self.fuzzy: dict[str, list[tuple[str, _Node]]] = {}
        self.targets: list[_Target] = []

    def child(self, word: str) -> _Node:
        node = self.children.get(word)
        if node is None:
            node = self.children[word] = _Node(self.depth + 1)
            if len(word) >= _FUZZY_MIN_LEN:
                self.fuzzy.setdefault(word[: _fuzzy_key_len(word)], []).append((word, node))
        return node

    def step(self, token: str) -> list[tuple[_Node, bool]]:
        """Children reached by text word ``token``: (node, exactly equal)."""
        out: list[tuple[_Node, bool]] = []
        node = self.children.get(token)
        if node is not None:
            out.append((node, True))
        if self.fuzzy and len(token) >= _STEM_MIN:
            for k in range(max(_STEM_MIN, len(token) - 2 * _MAX_ENDING), len(token) + 1):
                for word, child in self.fuzzy.get(token[:k], ()):
                    if word != token and _fuzzy_eq(word, token):
                        out.append((child, False))
        return out


@lru_cache(maxsize=65536)
def _fold_word(word: str) -> str:
    w = fold(word)
    return _SAME_WORD.get(w, w)


def _tokens(text: str) -> list[tuple[int, int, str]]:
    toks = [(m.start(), m.end(), _fold_word(m.group())) for m in _TOKEN.finditer(text)]
    if any(c in text for c in "♠♥♦♣"):
        toks = _card_mentions(text, toks)
    return toks


def _card_mentions(text: str, toks: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """``toks`` with each card named with a suit symbol, and its determiner, as one CARD_WORD token."""
    spans = [(m.start(), m.end()) for m in _CARD_MENTION.finditer(text)]
    if not spans:
        return toks
    out: list[tuple[int, int, str]] = []

    def emit(a: int, b: int) -> None:
        if out and out[-1][2] in _DETERMINERS and not text[out[-1][1]:a].strip():
            a = out.pop()[0]
        out.append((a, b, CARD_WORD))

    k = 0
    for t in toks:
        while k < len(spans) and spans[k][1] <= t[0]:
            emit(*spans[k])
            k += 1
        if k < len(spans) and spans[k][0] <= t[0] and t[1] <= spans[k][1]:
            continue  # the rank inside the mention
        out.append(t)
    for a, b in spans[k:]:
        emit(a, b)
    return out


def _term_words(term: str) -> tuple[str, ...]:
    return tuple(_fold_word(w) for w in _TOKEN.findall(term))


# Suit names of one language: a term of two or more words that names a suit ("no spades,
# partner?", "δεν έχεις μπαστούνια") is about any suit, so it is matched with each of them. Terms of one
# word (the suits themselves) keep their own.
_SUIT_GROUPS = tuple(frozenset(fold(w) for w in g.split()) for g in (
    "spades hearts diamonds clubs spade heart diamond club", "picche cuori quadri fiori",
    "πίκα κούπα καρό σπαθί μπαστούνι τριφύλλι πίκες κούπες καρά σπαθιά μπαστούνια τριφύλλια",
    "pique cœur coeur carreau trèfle piques cœurs coeurs carreaux trèfles", "pik herz karo kreuz treff",
    "pica corazón diamante trébol picas corazones diamantes tréboles",
))
_SUIT_GROUP = {w: g for g in _SUIT_GROUPS for w in g}


def _suit_variants(words: tuple[str, ...]) -> list[tuple[str, ...]]:
    """The term, and (with two or more words, one of them a suit) the term naming each other suit."""
    if len(words) < 2:
        return [words]
    for i, w in enumerate(words):
        group = _SUIT_GROUP.get(w)
        if group is not None:
            return [words[:i] + (s,) + rest for s in sorted(group) for rest in _suit_variants(words[i + 1:])]
    return [words]


def _card_variants(words: tuple[str, ...]) -> list[tuple[str, ...]]:
    """The term, and (with an article or possessive before a word for "card") the term naming a card."""
    out = [words]
    for i in range(1, len(words)):
        if words[i] in _CARD_WORDS and words[i - 1] in _DETERMINERS:
            out.append(words[:i - 1] + (CARD_WORD,) + words[i + 1:])
    return out


@lru_cache(maxsize=1 << 16)
def _fold_term(term: str) -> str:
    return " ".join(_term_words(term))


def _fuzzy_key_len(word: str) -> int:
    return max(_STEM_MIN, len(word) - _MAX_ENDING)


def _fuzzy_eq(word: str, token: str) -> bool:
    """Whether text ``token`` is an inflected form of term ``word`` (both folded, already known unequal)."""
    if len(word) < _FUZZY_MIN_LEN or len(token) < _STEM_MIN:
        return False
    p = 0
    limit = min(len(word), len(token))
    while p < limit and word[p] == token[p]:
        p += 1
    if p < _STEM_MIN:
        return False
    w_end, t_end = word[p:], token[p:]
    if len(w_end) > _MAX_ENDING or len(t_end) > _MAX_ENDING:
        return False
    if not _ENDING_CHARS.issuperset(w_end) or not _ENDING_CHARS.issuperset(t_end):
        return False
    if not w_end:  # an ending added: revoke/revoked, φύλλο/φύλλου, corazón/corazones, never two consonants
        return len(t_end) < 2 or bool(_VOWELS & set(t_end))  # (Geste/Gestern, declare/declarers)
    if not t_end:  # an ending dropped: only a final s (εκτελεστής/εκτελεστή, revokes/revoke)
        return w_end in _DROPPABLE
    # an ending replaced: vowel for vowel (carta/carte, εκτελεστής/εκτελεστές) or Greek final σ for a vowel
    # (αντίπαλος/αντιπάλου/αντίπαλοι), never shorter; a longer one must start with h or end in s/n
    # (attacco/attacchi, κούπα/κούπες), so that contrare/contraria or camps/campo do not match
    if (w_end[0] not in _VOWELS and w_end != "σ") or t_end[0] not in _VOWELS or len(t_end) < len(w_end):
        return False
    return len(t_end) == len(w_end) or t_end[0] == "h" or t_end[-1] in _GROWTH_FINALS


class Glossary:
    """The concepts, and a matcher precompiled from their terms."""

    def __init__(self, concepts: Iterable[Concept]):
        self.concepts: list[Concept] = list(concepts)
        self._by_id: dict[str, Concept] = {}
        for c in self.concepts:
            if c.id in self._by_id:
                raise GlossaryError(f"concept {c.id!r}: duplicate id")
            self._by_id[c.id] = c
        for c in self.concepts:
            for b in c.broader:
                if b == c.id or b not in self._by_id:
                    raise GlossaryError(f"concept {c.id!r}: broader concept {b!r} is unknown or itself")
            for group in c.implied_by:
                for part in group:
                    if part == c.id or part not in self._by_id:
                        raise GlossaryError(f"concept {c.id!r}: implied_by concept {part!r} is unknown or itself")
            for o in c.overrides:
                if o == c.id or o not in self._by_id:
                    raise GlossaryError(f"concept {c.id!r}: overridden concept {o!r} is unknown or itself")
        self._implied = [(c, group) for c in self.concepts for group in c.implied_by]
        self.reach: int | None = None  # in place of every concept's implied_reach (bench/ablation.py)
        self.use_overrides = True  # concepts' `overrides` applied (off in bench/ablation.py)
        self.use_phases = True  # a concept of both phases hints only at the story's phase (bench/ablation.py)
        self._root = _Node()
        self._step_cache: dict[str, list[tuple[_Node, bool]]] = {}
        self.gap = 0
        self._compile()

    @property
    def gap(self) -> int:
        """Extra text words a long term may contain (see for_questions)."""
        return self._gap

    @gap.setter
    def gap(self, value: int) -> None:
        """Matches depend on the gap: remembered ones are forgotten when it changes."""
        self._gap = value
        self.forget()

    def forget(self) -> None:
        """Drop remembered matches: after a change to how text is read (gap, implied concepts, reach)."""
        self._concepts_cache: dict[tuple[str, bool], list[ConceptHit]] = {}
        self._match_cache: dict[str, list[ConceptHit]] = {}

    @cached_property
    def for_questions(self) -> Glossary:
        """The same concepts and matcher, reading a director's question: long terms tolerate an extra word."""
        view = copy.copy(self)
        view.gap = _QUESTION_GAP  # and caches of its own
        return view

    # ------------------------------------------------------------------ loading

    @classmethod
    def load(cls, paths: Iterable[Path] | None = None) -> Glossary:
        """Load and validate glossary files (default: every ``*.toml`` in this package's folder)."""
        if paths is None:
            paths = sorted(GLOSSARY_DIR.glob("*.toml"))
        concepts: list[Concept] = []
        seen: dict[str, str] = {}
        for path in paths:
            path = Path(path)
            try:
                with path.open("rb") as fh:
                    data = tomllib.load(fh)
            except (OSError, tomllib.TOMLDecodeError) as exc:
                raise GlossaryError(f"{path.name}: cannot read glossary file: {exc}") from exc
            extra = set(data) - {"concept"}
            if extra:
                raise GlossaryError(f"{path.name}: unexpected top-level keys {sorted(extra)}")
            raw = data.get("concept", [])
            if not isinstance(raw, list):
                raise GlossaryError(f"{path.name}: 'concept' must be an array of tables ([[concept]])")
            for n, item in enumerate(raw, 1):
                concept = _parse_concept(item, f"{path.name}: concept #{n}")
                if concept.id in seen:
                    raise GlossaryError(
                        f"{path.name}: concept {concept.id!r}: duplicate id (also in {seen[concept.id]})"
                    )
                seen[concept.id] = path.name
                concepts.append(concept)
        return cls(concepts)

    # ------------------------------------------------------------------ lookup

    def get(self, concept_id: str) -> Concept:
        return self._by_id[concept_id]

    def __contains__(self, concept_id: object) -> bool:
        return concept_id in self._by_id

    def __len__(self) -> int:
        return len(self.concepts)

    def __iter__(self) -> Iterator[Concept]:
        return iter(self.concepts)

    # ------------------------------------------------------------------ matching

    def _compile(self) -> None:
        for concept in self.concepts:
            for lang in LANGS:
                for term in concept.terms.get(lang, ()):
                    words = _term_words(term)
                    if not words:
                        continue
                    for variant in (v for c in _card_variants(words) for v in _suit_variants(c)):
                        node = self._root
                        for word in variant:
                            node = node.child(word)
                        if all(t.concept.id != concept.id for t in node.targets):
                            node.targets.append(_Target(concept, lang, term, concept.is_weak_term(term)))

    def _first_step(self, token: str) -> list[tuple[_Node, bool]]:
        """Root step for a text word, cached: most words of a text are repeats."""
        found = self._step_cache.get(token)
        if found is None:
            if len(self._step_cache) >= _CACHE_MAX:
                self._step_cache.clear()
            found = self._step_cache[token] = self._root.step(token)
        return found

    def match(self, text: str) -> list[ConceptHit]:
        """Concept mentions in ``text``: leftmost-longest, non-overlapping, whole words.

        At each word the longest term starting there wins (ties: more exactly-equal words); a word
        sequence shared by several concepts yields one hit per concept, with the same span.
        Cached for short texts: a search asks about its query several times.
        """
        if len(text) > 2000:
            return self._match(text)
        found = self._match_cache.get(text)
        if found is None:
            if len(self._match_cache) >= 256:
                self._match_cache.clear()
            found = self._match_cache[text] = self._match(text)
        return list(found)

    def _match(self, text: str) -> list[ConceptHit]:
        toks = _tokens(text)
        n = len(toks)
        gap = self._gap
        hits: list[ConceptHit] = []
        i = 0
        while i < n:
            # a state: (node, words equal to the term's, a text word skipped so far, ended on a skip)
            frontier = [(node, int(exact), 0, False) for node, exact in self._first_step(toks[i][2])]
            best: _Node | None = None
            best_key = (-gap - 1, 0, 0)
            best_size = size = 1
            while frontier:
                for node, exact, skips, skipped in frontier:
                    if node.targets and not skipped and (not skips or node.depth >= _GAP_MIN_WORDS):
                        key = (-skips, node.depth, exact)  # a match word for word first
                        if key > best_key:
                            best, best_key, best_size = node, key, size
                if i + size >= n:
                    break
                token = toks[i + size][2]
                frontier = [
                    (child, exact + same, skips, False)
                    for node, exact, skips, _ in frontier
                    if node.children
                    for child, same in node.step(token)
                ] + [
                    (node, exact, skips + 1, True)
                    for node, exact, skips, _ in frontier
                    if node.children and skips < gap and token not in _UNSKIPPABLE
                ]
                size += 1
            if best is None:
                i += 1
                continue
            start, end = toks[i][0], toks[i + best_size - 1][1]
            negated = _negated(toks, i, text)
            for t in best.targets:
                hits.append(ConceptHit(t.concept, t.lang, t.term, start, end, t.weak, negated))
            i += best_size
        return hits

    def without_negated(self, text: str) -> str:
        """``text`` with its negated concept mentions blanked out ("non c'è renonce" searches no revoke)."""
        return self.without(text, lambda h: h.negated)

    def without(self, text: str, drop: Callable[[ConceptHit], bool]) -> str:
        """``text`` with the concept mentions ``drop`` picks blanked out (same length: spans stay valid)."""
        for h in reversed([h for h in self.match(text) if drop(h)]):
            text = text[:h.start] + " " * (h.end - h.start) + text[h.end:]
        return text

    def _strong_hits(self, text: str, include_weak: bool) -> list[ConceptHit]:
        """The mentions that count: not negated; weak ones only beside a strong mention of the same law (or
        when asked for); and the concepts their parts imply. Cached for short texts: a search asks about
        its query several times (expansion, concepts, laws)."""
        key = (text, include_weak)
        found = self._concepts_cache.get(key)
        if found is None:
            hits = [h for h in self.match(text) if not h.negated]
            context = {n for h in hits if not h.weak for n in h.concept.law_numbers}
            found = [h for h in hits if include_weak or not h.weak or not context.isdisjoint(h.concept.law_numbers)]
            implied = self._implied_hits(text, hits, {h.concept.id for h in found})
            if implied:  # in order of mention, like the rest
                found = sorted(found + implied, key=lambda h: h.start)
            if len(text) <= 2000:
                if len(self._concepts_cache) >= 256:
                    self._concepts_cache.clear()
                self._concepts_cache[key] = found
        return list(found)

    def _implied_hits(self, text: str, hits: list[ConceptHit], present: set[str]) -> list[ConceptHit]:
        """A concept said in parts ("East doubled, before his turn": double + out of turn; "the revoke is
        established"), each part within a few words of the next: a question describes in its own words
        what the glossary lists as one phrase. A part may be weak ("established") if another is not.
        ``present`` (the ids already counted) gains the implied ones."""
        if not self._implied or len(hits) < 2:
            return []
        mentioned = {h.concept.id for h in hits}
        out: list[ConceptHit] = []
        for concept, group in self._implied:
            if concept.id in present or not mentioned.issuperset(group):
                continue
            parts = [[h for h in hits if h.concept.id == part and not (h.weak and _after_not(text, h))]
                     for part in group]
            reach = concept.implied_reach if self.reach is None else self.reach
            for first in parts[0]:
                chosen = _near_all(text, first, parts[1:], reach)
                if chosen is not None and not all(h.weak for h in chosen):
                    start, end = min(h.start for h in chosen), max(h.end for h in chosen)
                    out.append(ConceptHit(concept, first.lang, "", start, end))
                    present.add(concept.id)
                    break
        return out

    def _strong_concepts(self, text: str, include_weak: bool) -> list[Concept]:
        return list({h.concept.id: h.concept for h in self._strong_hits(text, include_weak)}.values())

    def concept_ids(self, text: str, *, broader: bool = False, include_weak: bool = False) -> list[str]:
        """Ids of the concepts mentioned in ``text``, in order of first mention.

        ``broader=True`` adds the (transitively) broader concepts of each one, e.g. ``penalty_card``
        for a passage that only says "major penalty card"; weak hits are skipped unless asked for.
        """
        ids: dict[str, None] = {}
        for concept in self._strong_concepts(text, include_weak):
            ids[concept.id] = None
            if broader:
                stack = list(concept.broader)
                while stack:
                    b = stack.pop()
                    if b not in ids:
                        ids[b] = None
                        stack.extend(self._by_id[b].broader)
        return list(ids)

    def expand(
        self,
        text: str,
        langs: Iterable[str] = ("it", "en", "el"),
        *,
        per_lang: int = 2,
        include_weak: bool = False,
    ) -> str:
        """The concepts of ``text`` rendered as their first ``per_lang`` terms in each of ``langs``.

        Space-joined, in order of first mention, without repeating a term; "" when nothing is found.
        Used to expand a query across languages (an Italian query about a revoke gains "revoke", "ρενόνς").
        """
        langs = tuple(langs)
        out: list[str] = []
        seen: set[str] = set()
        for concept in self._strong_concepts(text, include_weak):
            for lang in langs:
                for term in concept.terms.get(lang, ())[:per_lang]:
                    key = _fold_term(term)
                    if key not in seen:
                        seen.add(key)
                        out.append(term)
        return " ".join(out)

    def laws_for(self, text: str) -> list[str]:
        """Canonical laws related to the concepts of ``text`` (order of first mention, no repeats)."""
        return list(self.law_hints(text))

    def law_hints(self, text: str, routine: float = 1.0) -> dict[str, float]:
        """``laws_for`` with a weight per law: 1, or ``routine`` for the laws of routine concepts when
        ``text`` also names a concept that is not routine. Why: a story about a revoke also says "a lead
        from dummy" and "a small trump", and those name the Laws on designating dummy's cards; the
        question is about the revoke."""
        concepts = self._strong_concepts(text, False)
        overridden = {o for c in concepts for o in c.overrides} if self.use_overrides else set()
        concepts = [c for c in concepts if c.id not in overridden]
        telling = any(c.laws and not c.routine for c in concepts)
        # A concept said both of calls and of cards ("a slip of the tongue") takes the laws of the phase the
        # rest of the story is in, when it is in one: the auction's (Laws 17-40) or the play's (41-72).
        told = _told_phases(concepts) if self.use_phases else set()
        hints: dict[str, float] = {}
        for c in concepts:
            wt = routine if telling and c.routine else 1.0
            laws = c.laws
            if len(told) == 1 and len(_phases(laws)) > 1:
                laws = tuple(law for law in laws if law_phase(law) in told or law_phase(law) is None)
            for law in laws:
                hints[law] = max(hints.get(law, 0.0), wt)
        return {law: wt for law, wt in hints.items() if wt > 0}

    def story_phase(self, text: str) -> str | None:
        """'auction' or 'play' when every concept of ``text`` that belongs to one phase belongs to that one."""
        told = _told_phases(self._strong_concepts(text, False))
        return next(iter(told)) if len(told) == 1 else None

    def _greek_forms(self, key: Callable[[str], str]) -> dict[str, dict[str, int]]:
        """The lower-case words of the glossary's Greek terms grouped by ``key``, each with its count."""
        groups: dict[str, dict[str, int]] = {}
        for c in self.concepts:
            for term in c.terms.get("el", ()):
                for w in _GREEK_WORD.findall(term):
                    w = w.lower()
                    forms = groups.setdefault(key(w), {})
                    forms[w] = forms.get(w, 0) + 1
        return groups

    @cached_property
    def _greek_spellings(self) -> dict[str, str]:
        """Unaccented Greek word → the spelling the glossary's terms use most (which may be unaccented)."""
        return {k: max(forms, key=lambda f: (forms[f], f == k))
                for k, forms in self._greek_forms(_unaccented).items()}

    def with_accents(self, text: str) -> str:
        """``text`` with its Greek words typed without accents given those the glossary's terms spell them with.

        Why: directors type Greek without tonos, and the embedding model reads "κρατουσε" and "κρατούσε"
        as different words (the Greek tuning questions with their accents stripped lose 0.03 section R@5;
        restored, they lose nothing). Words of one or two letters, words with an accent, and words the
        glossary writes without one ("που", "και") are left alone, and so are words in capitals."""
        if not _HAS_GREEK.search(text):
            return text
        spell = self._greek_spellings

        def restore(m: re.Match) -> str:
            w = m.group()
            if len(w) <= 2 or w.isupper() or _unaccented(w) != w:
                return w
            low = w.lower()
            out = spell.get(low)
            if out is None or out == low:
                return w
            return out[0].upper() + out[1:] if w[0].isupper() else out
        return _GREEK_WORD.sub(restore, text)

    @cached_property
    def _greeklish_spellings(self) -> dict[str, str]:
        """Greeklish skeleton → the Greek word of the glossary's terms that has it (the commonest)."""
        groups = self._greek_forms(lambda w: _greeklish_skeleton(_to_latin(w)))
        return {k: max(forms, key=lambda f: (forms[f], f)) for k, forms in groups.items()}

    @cached_property
    def _latin_words(self) -> frozenset[str]:
        """Folded words of four letters or more of the glossary's terms in Latin letters, in any language (and
        in Greek terms); shorter ones ("lei", "se") are as likely Greeklish."""
        return frozenset(fold(w) for c in self.concepts for terms in c.terms.values() for t in terms
                         for w in _LATIN_WORD.findall(t) if len(w) >= 4)

    def from_greeklish(self, text: str) -> str | None:
        """``text`` in Greek letters when it is Greek written in Latin ones ("o ektelestis ekane renons"),
        else None.

        Why: Greek players still type Greeklish, and then nothing of the question reads as Greek: no
        glossary concept, no Greek stem, and the model sees words it hardly knows. A word the glossary's
        Greek terms have (compared by a skeleton that forgets how each Greek letter was spelled: η as
        i/h, ω as o/w, θ as th/8, ευ as eu/ev/ef...) takes its Greek spelling; a word the glossary has in
        Latin letters ("board", "claim", "declarer") stays; other words are spelled letter by letter.
        Decided on the whole text: at least half of its words of three letters or more must be glossary
        words, and it must contain no Greek letter."""
        if _HAS_GREEK.search(text):
            return None
        words = _LATIN_WORD.findall(text)
        spell = self._greeklish_spellings
        long = [w for w in words if len(w) >= 3]
        if len(long) < 3:
            return None
        known = sum(_greeklish_lookup(spell, w) is not None for w in long)
        if known * 2 < len(long):
            return None

        def greek(m: re.Match) -> str:
            w = m.group()
            out = _greeklish_lookup(spell, w)
            if out is None:
                if fold(w) in self._latin_words:  # a loanword the glossary knows ("board", "claim") stays
                    return w
                out = _letters_to_greek(w.lower())
            return out[0].upper() + out[1:] if w[0].isupper() else out
        return _LATIN_WORD.sub(greek, text)

    def law_votes(self, text: str) -> dict[str, float]:
        """What a passage's words say it is about: each mention of a concept that names laws is one vote,
        shared among its laws; routine concepts ("a lead", "from dummy") vote only in a text that names
        nothing else. Why: a document about laws no tagged passage covers can't borrow its laws from its
        neighbours; "claim", "concession", "acquiescence" said ten times still name Laws 68–71."""
        hits = [h for h in self.match(text) if not h.weak and not h.negated and h.concept.laws]
        telling = any(not h.concept.routine for h in hits)
        votes: dict[str, float] = {}
        for h in hits:
            if telling and h.concept.routine:
                continue
            for law in h.concept.laws:
                votes[law] = votes.get(law, 0.0) + 1.0 / len(h.concept.laws)
        return votes


_GREEK_WORD = re.compile(r"[\u0370-\u03ff\u1f00-\u1fff]+")
_HAS_GREEK = re.compile(r"[\u0370-\u03ff\u1f00-\u1fff]")


_LATIN_WORD = re.compile(r"(?:[A-Za-z]|8(?=[A-Za-z]))+")  # Greeklish writes θ as 8 too: "8a", "ka8e"
_TO_LATIN = str.maketrans({"α": "a", "β": "v", "γ": "g", "δ": "d", "ε": "e", "ζ": "z", "η": "i", "θ": "th", "ι": "i",
                           "κ": "k", "λ": "l", "μ": "m", "ν": "n", "ξ": "x", "ο": "o", "π": "p", "ρ": "r", "σ": "s",
                           "τ": "t", "υ": "y", "φ": "f", "χ": "x", "ψ": "ps", "ω": "o"})
# Spellings of one Greek sound or letter that Greeklish writers use interchangeably, folded to one.
_SKELETON_STEPS = (
    (("th", "8"), ("ch", "x"), ("kh", "x"), ("ph", "f"), ("ks", "x"), ("cs", "x")),
    (("ou", "u"),),
    (("eu", "ev"), ("ey", "ev"), ("ef", "ev"), ("au", "av"), ("ay", "av"), ("af", "av")),
    (("ei", "i"), ("oi", "i"), ("yi", "i"), ("ai", "e")),
    (("mp", "b"), ("nt", "d"), ("gk", "g"), ("gg", "g")),
    (("h", "i"), ("w", "o"), ("y", "i"), ("b", "v"), ("c", "k"), ("q", "k")),
)
_DOUBLED = re.compile(r"(.)\1+")
# Latin letters to Greek for the words the glossary does not have: digraphs first.
_LETTERS_TO_GREEK = (("th", "θ"), ("ch", "χ"), ("ps", "ψ"), ("ks", "ξ"), ("ou", "ου"), ("mp", "μπ"), ("nt", "ντ"),
                     ("a", "α"), ("b", "μπ"), ("c", "κ"), ("d", "δ"), ("e", "ε"), ("f", "φ"), ("g", "γ"), ("h", "η"),
                     ("i", "ι"), ("j", "τζ"), ("k", "κ"), ("l", "λ"), ("m", "μ"), ("n", "ν"), ("o", "ο"), ("p", "π"),
                     ("q", "κ"), ("r", "ρ"), ("s", "σ"), ("t", "τ"), ("u", "ου"), ("v", "β"), ("w", "ω"), ("x", "χ"),
                     ("y", "υ"), ("z", "ζ"), ("8", "θ"))
_LETTERS_RE = re.compile("|".join(re.escape(a) for a, _ in _LETTERS_TO_GREEK))
_LETTERS_MAP = dict(_LETTERS_TO_GREEK)


def _to_latin(greek_word: str) -> str:
    return fold(greek_word).replace("ου", "ou").translate(_TO_LATIN)


@lru_cache(maxsize=1 << 16)
def _greeklish_skeleton(latin: str) -> str:
    s = latin.lower()
    for step in _SKELETON_STEPS:
        for a, b in step:
            s = s.replace(a, b)
    return _DOUBLED.sub(r"\1", s)


def _greeklish_lookup(spell: dict[str, str], word: str) -> str | None:
    """The Greek word for a Greeklish one; "th" is θ, or τ then η written h ("ths", "ektelesths")."""
    found = spell.get(_greeklish_skeleton(word))
    if found is None and "th" in word.lower():
        found = spell.get(_greeklish_skeleton(word.lower().replace("th", "ti")))
    return found


def _letters_to_greek(word: str) -> str:
    out = _LETTERS_RE.sub(lambda m: _LETTERS_MAP[m.group()], word)
    return out[:-1] + "ς" if out.endswith("σ") else out


def law_phase(law: str) -> str | None:
    """'auction' for Laws 17-40, 'play' for Laws 41-72, None for the rest (general laws, the director's)."""
    n = lawref.parts(law)[0]
    return "auction" if 17 <= n <= 40 else "play" if 41 <= n <= 72 else None


def _phases(laws: Iterable[str]) -> set[str]:
    return {p for law in laws if (p := law_phase(law)) is not None}


def _told_phases(concepts: Iterable[Concept]) -> set[str]:
    """The phases named by the concepts whose laws all lie in one phase."""
    return {p for c in concepts if len(ps := _phases(c.laws)) == 1 for p in ps}


def _unaccented(word: str) -> str:
    """The word without tonos or diaeresis, case kept (unlike textnorm.fold, which also folds case and σ/ς)."""
    return unicodedata.normalize("NFC", "".join(ch for ch in unicodedata.normalize("NFD", word)
                                                if not unicodedata.combining(ch)))


def _string_list(value: object, what: str, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise GlossaryError(f"{where}: {what} must be a list of non-empty strings")
    return tuple(v.strip() for v in value)


def _parse_concept(item: object, where: str) -> Concept:
    if not isinstance(item, dict):
        raise GlossaryError(f"{where}: must be a table")
    cid = item.get("id")
    if not isinstance(cid, str) or not ID_RE.match(cid):
        raise GlossaryError(f"{where}: missing or invalid id {cid!r} (snake_case English expected)")
    where = f"{where.split(':')[0]}: concept {cid!r}"
    extra = set(item) - _CONCEPT_KEYS
    if extra:
        raise GlossaryError(f"{where}: unknown keys {sorted(extra)}")

    terms: dict[str, tuple[str, ...]] = {}
    for lang in LANGS:
        if lang not in item:
            if lang in REQUIRED_LANGS:
                raise GlossaryError(f"{where}: missing required language {lang!r}")
            continue
        values = _string_list(item[lang], f"terms for {lang!r}", where)
        if not values:
            raise GlossaryError(f"{where}: empty term list for {lang!r}")
        for v in values:
            if not _term_words(v):
                raise GlossaryError(f"{where}: term {v!r} ({lang}) has no word characters")
        terms[lang] = tuple(dict.fromkeys(values))

    laws = _string_list(item.get("laws", []), "laws", where)
    for law in laws:
        if not LAW_RE.match(law):
            raise GlossaryError(f"{where}: law {law!r} is not in canonical form (e.g. '46B2', '64', '50D')")

    weak = item.get("weak", False)
    if not isinstance(weak, bool):
        raise GlossaryError(f"{where}: weak must be true or false")

    all_terms = {_fold_term(t) for values in terms.values() for t in values}
    weak_terms = set()
    for t in _string_list(item.get("weak_terms", []), "weak_terms", where):
        key = _fold_term(t)
        if key not in all_terms:
            raise GlossaryError(f"{where}: weak term {t!r} is not one of the concept's terms")
        weak_terms.add(key)

    broader = _string_list(item.get("broader", []), "broader", where)
    groups = item.get("implied_by", [])
    if not isinstance(groups, list) or not all(isinstance(g, list) and len(g) >= 2 for g in groups):
        raise GlossaryError(f"{where}: implied_by must be a list of lists of two or more concept ids")
    implied = tuple(_string_list(g, "implied_by", where) for g in groups)
    reach = item.get("implied_reach", 0)
    if not isinstance(reach, int) or isinstance(reach, bool) or not 0 <= reach <= 6 or (reach and not implied):
        raise GlossaryError(f"{where}: implied_reach must be 0 to 6, and go with implied_by")
    routine = item.get("routine", False)
    if not isinstance(routine, bool):
        raise GlossaryError(f"{where}: routine must be true or false")
    overrides = _string_list(item.get("overrides", []), "overrides", where)
    return Concept(cid, laws, terms, weak, frozenset(weak_terms), broader, implied, reach, overrides, routine)


def _after_not(text: str, hit: ConceptHit) -> bool:
    """Whether one of the three words before a weak part is a "not": "nicht etabliert", "not yet
    established" (such a part is often a verb negated after its noun, where the matcher's negation rule
    does not look; a strong part, a noun, has that rule). Not across a comma or a sentence end: "ah no,
    ce l'ho", "oh no, I have one" is an exclamation before what it says."""
    window = text[max(0, hit.start - 30):hit.start]
    window = _SENTENCE_BREAK.split(window)[-1]
    before = re.findall(r"\w+", fold(window))
    return not _NOT.isdisjoint(before[-3:])


def _near_all(text: str, first: ConceptHit, rest: list[list[ConceptHit]], reach: int = 0) -> list[ConceptHit] | None:
    """``first`` and one mention of each other part, when every part lies within ``_IMPLIED_GAP`` words
    of the span so far (in either order), with no sentence end or clause join between them.

    With ``reach`` > 0 the parts may be told apart, as a story tells them ("RHO ruffed the diamond. At the
    end he still had one"): up to ``reach`` sentence ends and ``reach × _REACH_WORDS`` words between them."""
    chosen, start, end = [first], first.start, first.end
    for mentions in rest:
        for h in mentions:
            between = text[end:h.start] if h.start >= end else text[h.end:start] if h.end <= start else ""
            words = re.findall(r"\w+", fold(between))
            if reach:
                if len(re.findall(r"[.!?;\n]+", between)) > reach or len(words) > _REACH_WORDS * reach:
                    continue
            elif re.search(r"[.!?;\n]", between) or len(words) > _IMPLIED_GAP or _CLAUSE_JOINS.intersection(words):
                continue
            chosen.append(h)
            start, end = min(start, h.start), max(end, h.end)
            break
        else:
            return None
    return chosen


@lru_cache(maxsize=1)
def default_glossary() -> Glossary:
    """The glossary of this package's ``*.toml`` files, loaded once."""
    return Glossary.load()


def question_glossary() -> Glossary:
    """The default glossary as it reads questions (see :attr:`Glossary.for_questions`)."""
    return default_glossary().for_questions
