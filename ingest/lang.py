"""Language of a passage (not of a document: the commentary PDF mixes Greek and English).

lingua-language-detector was kept over langdetect: it is deterministic, built for short text,
and on short Italian/English/Greek passages it errs less (see bench/langid_compare.py). Its
low-accuracy mode (trigram models only) loads in a fraction of a second instead of seconds.
Greek is decided by script before any model runs: it is unambiguous and free.
"""

from __future__ import annotations

import re
from functools import lru_cache

# Languages a bridge director's documents plausibly come in; others are still labelled when seen.
_LANGS = ("ITALIAN", "ENGLISH", "GREEK", "FRENCH", "GERMAN", "SPANISH", "DUTCH", "PORTUGUESE", "POLISH",
          "SWEDISH", "DANISH", "BOKMAL", "TURKISH", "CROATIAN", "HUNGARIAN", "CZECH", "RUSSIAN", "HEBREW",
          "ARABIC", "CHINESE", "JAPANESE")
_LETTERS = re.compile(r"[^\W\d_]", re.UNICODE)
_GREEK = re.compile(r"[\u0370-\u03ff\u1f00-\u1fff]")


@lru_cache(maxsize=1)
def _detector():
    from lingua import Language, LanguageDetectorBuilder

    langs = [getattr(Language, n) for n in _LANGS if hasattr(Language, n)]
    return LanguageDetectorBuilder.from_languages(*langs).with_low_accuracy_mode().build()


def detect(text: str, default: str = "und") -> str:
    """ISO 639-1 code of the text's language; `default` when there is too little text to tell."""
    letters = _LETTERS.findall(text)
    if len(letters) < 3:
        return default
    greek = sum(1 for c in letters if _GREEK.match(c))
    if greek / len(letters) > 0.4:
        return "el"
    sample = text if len(text) < 4000 else text[:4000]
    lang = _detector().detect_language_of(sample)
    if lang is None:
        return default
    code = lang.iso_code_639_1.name.lower()
    return "no" if code == "nb" else code
