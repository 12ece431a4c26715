"""Text normalisation for matching: the one place that decides when two spellings are 'the same'.

Directors type Greek without tonos, Italian without accents, in any case; final sigma and
sigma must match. Used by the lexical index, the glossary and the snippet highlighter alike,
so a query and a passage are always folded the same way.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import snowballstemmer

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_STEM_LANGS = {"it": "italian", "en": "english", "el": "greek", "fr": "french", "de": "german", "es": "spanish",
               "nl": "dutch"}


class _WithoutMarks(dict):
    """``str.translate`` table that deletes combining marks and keeps every other character; it learns
    each code point the first time it is seen, so folding runs at C speed after the first texts."""

    def __missing__(self, code: int) -> int | None:
        kept = None if unicodedata.combining(chr(code)) else code
        self[code] = kept
        return kept


_WITHOUT_MARKS = _WithoutMarks()


def fold(text: str) -> str:
    """Casefold, strip accents/tonos/diaeresis, final sigma → sigma. Keeps length-independent words."""
    if text.isascii():  # nothing to decompose or strip
        return text.casefold()
    return unicodedata.normalize("NFKD", text).translate(_WITHOUT_MARKS).casefold().replace("ς", "σ")


def prose(text: str) -> str:
    """``text`` without its deal diagram lines (those starting with a suit symbol): what the model, the
    lexical index and the snippets read of a passage."""
    return "\n".join(ln for ln in text.split("\n") if not ln.lstrip().startswith(("♠", "♥", "♦", "♣")))


def words(text: str) -> list[str]:
    """Folded word tokens (letters and digits), in order."""
    return _WORD.findall(fold(text))


@lru_cache(maxsize=16)
def _stemmer(lang: str):
    return snowballstemmer.stemmer(_STEM_LANGS[lang])


def stem_words(tokens: list[str], lang: str) -> list[str]:
    """Snowball stems for a language we have a stemmer for; the tokens unchanged otherwise.

    Greek Snowball expects upper-case-insensitive but accent-free input, which `fold` gives.
    """
    if lang not in _STEM_LANGS:
        return tokens
    return _stemmer(lang).stemWords(tokens)


def script_lang(token: str) -> str | None:
    """'el' for a Greek-script token; None otherwise (Latin script needs a real detector)."""
    for c in token:
        if "\u0370" <= c <= "\u03ff" or "\u1f00" <= c <= "\u1fff":
            return "el"
    return None
