"""Folding decides when a query word and a passage word are the same: it must not change by accident."""

import unicodedata

import pytest

from kb.textnorm import fold, words


def reference_fold(text: str) -> str:
    """The definition, one character at a time: decompose, drop combining marks, casefold, final sigma."""
    text = unicodedata.normalize("NFKD", text)
    return "".join(c for c in text if not unicodedata.combining(c)).casefold().replace("ς", "σ")


@pytest.mark.parametrize(("text", "folded"), [
    ("Renonce", "renonce"),
    ("Però è Già", "pero e gia"),
    ("ΕΚΤΕΛΕΣΤΉΣ", "εκτελεστησ"),
    ("εκτελεστής", "εκτελεστησ"),
    ("ρενόνς", "ρενονσ"),
    ("Straße", "strasse"),
    ("ﬁnesse", "finesse"),  # compatibility ligature
    ("45C4b ♠K", "45c4b ♠k"),
])
def test_fold_strips_case_accents_tonos_and_final_sigma(text: str, folded: str) -> None:
    assert fold(text) == folded


def test_fold_matches_its_definition_on_every_script_it_meets() -> None:
    sample = "".join(chr(c) for c in range(0x20, 0x2000)) + "ἄνθρωπος ὁδός Ἀθῆναι çàéìòù ÇÀÉÌÒÙ ﬀ ½ ™"
    assert fold(sample) == reference_fold(sample)
    assert fold(sample) == reference_fold(sample)  # the second time from the learned table


def test_ascii_and_accented_spellings_fold_to_the_same_words() -> None:
    assert words("Il MORTO ha giocato") == words("il morto ha giocàto")
    assert words("Ο εκτελεστής") == words("ο ΕΚΤΕΛΕΣΤΗΣ")
