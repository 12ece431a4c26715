"""Tests for kb.lawref: reading law addresses in seven languages and rejecting bridge look-alikes."""

from __future__ import annotations

import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from kb.lawref import (
    LANGS,
    RefMatch,
    address_query,
    ancestors,
    canonical,
    depth,
    extends,
    find_refs,
    is_canonical,
    parent,
    parse_refs,
    parts,
    render,
    scope_of,
    sort_key,
)

CANONICAL = re.compile(r"(?:[1-9]|[1-8][0-9]|9[0-3])(?:[A-H](?:[1-9][a-e]?)?)?")

# --------------------------------------------------------------------------------------------------
# Positive examples, per language
# --------------------------------------------------------------------------------------------------

ENGLISH = [
    ("Law 45C4(b)", ["45C4b"]),
    ("Law 45 C 4 (b)", ["45C4b"]),
    ("Laws 47D and 16D1", ["47D", "16D1"]),
    ("L45c4a", ["45C4a"]),
    ("Laws 30-32", ["30", "31", "32"]),
    ("Law 64C1", ["64C1"]),
    ("Law 45E applies", ["45E"]),
    ("(see Laws 47D and 16D1)", ["47D", "16D1"]),
    ("Laws 45, 46 & 47", ["45", "46", "47"]),
    ("45C1, 45C2, 45C3", ["45C1", "45C2", "45C3"]),
    ("Law 16D may apply", ["16D"]),
    ("Law **45C4b**", ["45C4b"]),
    ("Law 45C2b", ["45C2b"]),
    ("in which case Law 53 or 56 applies.", ["53", "56"]),
    ("(Laws 16D and 62C2 may apply.)", ["16D", "62C2"]),
    ("Laws 45, 46 and 47 |", ["45", "46", "47"]),
    ("see Law\n68B2 when partner", ["68B2"]),
    ("LAW 46 – INCOMPLETE OR ERRONEOUS CALL", ["46"]),
    ("Law 45C4(a) or (b)", ["45C4a", "45C4b"]),
    ("Laws 45 to 47", ["45", "46", "47"]),
    ("Law 45, paragraph C", ["45C"]),
    ("Law 47E2b applies", ["47E2b"]),
    ("NO! 45C4a; we do not use 45C4b.", ["45C4a", "45C4b"]),
    ("consult each other (**Law 10C2**).", ["10C2"]),
    ("Law 4H", ["4H"]),  # a keyword makes even a contract-looking token a law
    ("Laws 45C, D and E", ["45C", "45D", "45E"]),
    ("Law 45C1-3 applies", ["45C1", "45C2", "45C3"]),
    ("Law 12C1 (c)", ["12C1c"]),
    ("Law 40B2(a)(ii)", ["40B2a"]),
    ("law 20F1 and 40B2(a)", ["20F1", "40B2a"]),
]

ITALIAN = [
    ("art. 45C4b", ["45C4b"]),
    ("art.. 47E", ["47E"]),
    ("art.72/B1", ["72B1"]),
    ("Articolo 47 del Codice di Gara paragrafo E2", ["47E2"]),
    ("Articolo 20 del Codice di Gara paragrafo F2 e F3", ["20F2", "20F3"]),
    ("l’Articolo 54 del Codice di Gara paragrafo A quando", ["54A"]),
    ("46B e 46B2", ["46B", "46B2"]),
    ("45C1,2 o 3", ["45C1", "45C2", "45C3"]),
    ("ARTT. 45/46/47", ["45", "46", "47"]),
    ("artt. 62 e 63", ["62", "63"]),
    ("art.43/B2(b)", ["43B2b"]),
    ("art. 43B 2c", ["43B2c"]),
    ("L45D", ["45D"]),
    ("**45 C2**", ["45C2"]),
    ("46 B1 INCOMPLETA DESIGNAZIONE", ["46B1"]),
    ("(L45c4a (non b))", ["45C4a"]),
    ("art.16/C", ["16C"]),
    ("ART.30 - PASSO FUORI TURNO", ["30"]),
    ("ART 31 = Licita FT", ["31"]),
    ("Art. 41 – INIZIO DEL GIOCO", ["41"]),
    ("si applica il comma A2 b)", []),
    ("vedi art.29", ["29"]),
    ("Articoli 64B2 e 64C", ["64B2", "64C"]),
    ("l'Articolo 64 (64A1, 64A2 o 64B1)", ["64", "64A1", "64A2", "64B1"]),
    ("art. 49", ["49"]),
    ("art. 55A", ["55A"]),
    ("dell’art.26B, e:", ["26B"]),
    ("(soggetti all’Articolo 16 del Codice di Gara) ed il dichiarante", ["16"]),
    ("L45D, 5 carte ritirate", ["45D"]),
    ("Ecco un caso (art. **45c4b**). E' chiaro", ["45C4b"]),
    ("Si applica il **46B** prima e poi **il 46B5**.", ["46B", "46B5"]),
    ("artt. 45 a 47", ["45", "46", "47"]),
    ("ART. 45 E 46", ["45", "46"]),  # upper-case "E" is "and" here, not section E
    ("Art. 73 E 1: è lecito ingannare", ["73E1"]),  # ... but section E when a sub-paragraph digit follows
    ("l'Art. 73 D 2, 73 E 2 e 73 F", ["73D2", "73E2", "73F"]),
    ("Art. 43 A 2 b", ["43A2b"]),
    ("Art. 45 C 4 b e 46 B", ["45C4b", "46B"]),
]

GREEK = [
    ("Νόμος 45ΣΤ", ["45F"]),
    ("Νόμο 64Γ1", ["64C1"]),
    ("Νόμου 45Γ4β", ["45C4b"]),
    ("τον Νόμο 64Α", ["64A"]),
    ("Νόμο 25Α", ["25A"]),
    ("Νόμους 45–47", ["45", "46", "47"]),
    ("Νόμων 45 και 46", ["45", "46"]),
    ("64Γ1", ["64C1"]),
    ("Νόμος 16Δ1", ["16D1"]),
    ("του  Νόμου  45ΣΤ,  ο  Διαιτητής", ["45F"]),
    ("ΝΟΜΟΣ 45Η", ["45H"]),
    ("Ο Νόμος αυτός μας λέει", []),
]

OTHER = [
    ("Loi 45C4b", ["45C4b"]),
    ("article 45", ["45"]),
    ("l'article 45C", ["45C"]),
    ("Regel 64A1", ["64A1"]),
    ("Gesetz 45", ["45"]),
    ("Ley 50D2", ["50D2"]),
    ("artículo 45C", ["45C"]),
    ("Artikel 45", ["45"]),
    ("Wet 45", ["45"]),
    ("Lois 45 et 46", ["45", "46"]),
    ("Regeln 45 und 46", ["45", "46"]),
    ("§ 45C", ["45C"]),
    ("art. 16.B.1.a", ["16B1a"]),
    ("Artikel Nr. 45", ["45"]),
    ("Law No. 45C", ["45C"]),
    ("Ley 45, apartado C", ["45C"]),
    ("Lois 45 à 47", ["45", "46", "47"]),
    ("των Νόμων 45 έως 47", ["45", "46", "47"]),
    ("Art. 16 B 1 a) ultimo", ["16B1a"]),
]

UNICODE = [
    ("Law\u00a045C4b", ["45C4b"]),
    ("Laws 30\u201432", ["30", "31", "32"]),
    ("Laws 30 \u2013 32", ["30", "31", "32"]),
    ("art.\u202f45C", ["45C"]),
    ("Law **45**C**4**b", ["45C4b"]),
    ("Law 45\u00adC", ["45C"]),
    ("Νο\u0301μος 45Γ", ["45C"]),  # decomposed tonos
]


@pytest.mark.parametrize(("text", "expected"), ENGLISH + ITALIAN + GREEK + OTHER + UNICODE)
def test_parse_refs(text: str, expected: list[str]) -> None:
    assert parse_refs(text) == expected


# --------------------------------------------------------------------------------------------------
# Negative examples: contracts, scores, boards, dates, measures, cards, ordinals
# --------------------------------------------------------------------------------------------------

NEGATIVES = [
    "3SA", "3NT", "4♠", "6♥-1", "2♠", "1NT", "4H", "5C", "Board 9", "BOARD 9", "12° presa", "la 12° presa",
    "1/4 December 2011", "30 cm", "8 prese", "trick 5", "the ♣10", "♦Q", "A♥", "7♦", "2 prese a E/O", "E/--",
    "Lille 1998", "anno 2007", "Stage 2007", "1) Playing on ♥", "- a)", "page 12", "n° 5", "4 picche fatte",
    "10 tricks", "Law 99Z", "art. 0", "Law 99", "Law 45Z", "6H", "4S", "3C", "3sa", "7NT", "10H", "5G",
    "Board 12A", "tavolo 45B", "ore 12h30", "30cm", "5th", "45", "il 9♦ e il 10♣", "Sud gioca 3 E",
    "proprio33 turno", "2.5 tricks", "12:30", "Esempio 3A", "♠KJ852 ♥QT864", "♥J1053", "♠K1094",
    "the 100th board", "n° 12B", "#45C", "Law 12° trick", "art. 045", "nº 12B", "coppia 12A", "12º presa",
    "25/12/2023", "2023-04-15", "15-17 HCP", "+420", "1♣-1♦-1NT-3NT", "E/W 3C", "10:30", "€45", "3C(2)", "4H(1)",
    # ordinals: a lower-case letter glued to the number ("12th", in Greek, French, Italian, Spanish)
    "στη 12η λεβέ", "Στην 13η λεβέ ο Ανατολικός", "11η λεβε", "à la 12e levée", "alla 12a presa", "en la 11a baza",
]


@pytest.mark.parametrize("text", NEGATIVES)
def test_never_a_reference(text: str) -> None:
    assert parse_refs(text) == []
    assert address_query(text) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Law 45 A player may", ["45"]),  # "A" the article, not section A
        ("Law 45 A 2 tricks", ["45"]),  # nor before a count
        ("Law 64, 2 tricks", ["64"]),  # a count, not Law 2
        ("Law 45C 2 tricks", ["45C"]),
        ("Law 45C4a, e poi", ["45C4a"]),
        ("Laws 12-40", ["12"]),  # too wide for a range
        ("Law 53 - 6 tricks", ["53"]),
        ("Law 45C3-1", ["45C3"]),
        ("Law 45 to 47", ["45"]),  # word ranges only after a plural keyword
        ("Sud gioca 4♥ e ha vinto (vedi art. 45C1)", ["45C1"]),
        ("South plays 6H-1, see Law 64A1", ["64A1"]),
    ],
)
def test_look_alikes_next_to_references(text: str, expected: list[str]) -> None:
    assert parse_refs(text) == expected


# --------------------------------------------------------------------------------------------------
# Spans, order, duplicates
# --------------------------------------------------------------------------------------------------


def test_find_refs_keeps_duplicates_and_spans() -> None:
    text = "See Law 45C2, then art. 45C2 again, and Νόμος 45Γ2."
    matches = find_refs(text)
    assert [m.ref for m in matches] == ["45C2", "45C2", "45C2"]
    assert [text[m.start:m.end] for m in matches] == ["Law 45C2", "art. 45C2", "Νόμος 45Γ2"]
    assert parse_refs(text) == ["45C2"]


def test_span_of_list_items() -> None:
    text = "in 45C1,2 o 3."
    spans = [text[m.start:m.end] for m in find_refs(text)]
    assert spans == ["45C1", "2", "3"]


def test_span_covers_markdown() -> None:
    text = "designation (Law **45C4b**). The"
    (m,) = find_refs(text)
    assert m == RefMatch("45C4b", 13, 24)
    assert text[m.start:m.end] == "Law **45C4b"


def test_range_span_is_whole_range() -> None:
    text = "Σχόλια στους Νόμους 45–47 ·"
    ms = find_refs(text)
    assert [m.ref for m in ms] == ["45", "46", "47"]
    assert text[ms[-1].start:ms[-1].end] == "Νόμους 45–47"


def test_empty_text() -> None:
    assert find_refs("") == []
    assert parse_refs("") == []


# --------------------------------------------------------------------------------------------------
# canonical / address_query
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("s", "expected"),
    [
        ("45C4b", "45C4b"),
        ("45 C 4 (b)", "45C4b"),
        ("45c4b", "45C4b"),
        ("Law 45C4(b)", "45C4b"),
        ("art. 45 C 4 b", "45C4b"),
        ("Νόμος 45Γ4β", "45C4b"),
        ("45Γ4β", "45C4b"),
        ("L45c4a", "45C4a"),
        ("  (45C4b).  ", "45C4b"),
        ("**45E2**", "45E2"),
        ("45 c 4 b", "45C4b"),
        ("art.72/B1", "72B1"),
        ("45", "45"),
        ("Νόμος 45ΣΤ", "45F"),
        ("45στ", "45F"),
        ("Articolo 47 del Codice di Gara paragrafo E2", "47E2"),
    ],
)
def test_canonical(s: str, expected: str) -> None:
    assert canonical(s) == expected


@pytest.mark.parametrize(
    "s",
    ["", "   ", "Law", "45, 46", "45C4b and 46", "Laws 30-32", "Law 99", "45Z", "45C4b x", "3NT", "hello"],
)
def test_canonical_rejects(s: str) -> None:
    assert canonical(s) is None


@pytest.mark.parametrize(
    ("q", "expected"),
    [
        ("46B2", ["46B2"]),
        ("art. 45 C 4 b", ["45C4b"]),
        ("Νόμος 45ΣΤ", ["45F"]),
        ("Laws 47D and 16D1", ["47D", "16D1"]),
        ("Law 45", ["45"]),
        ("law 45C4b?", ["45C4b"]),
        ("45C1, 45C2 e 45C3", ["45C1", "45C2", "45C3"]),
        ("artt. 62 e 63", ["62", "63"]),
        ("Νόμοι 45 και 46", ["45", "46"]),
        ("Loi 45C / Regel 46B", ["45C", "46B"]),
        ("Ley 45 y 46", ["45", "46"]),
        ("45C4b 45C4b", ["45C4b"]),
        ("45 c 4 b", ["45C4b"]),
        ("Regla 45C4b", ["45C4b"]),
        ("Law 64A(1)", ["64A1"]),  # a digit in brackets, as some English texts write it
        ("Law 16B(1)(a)", ["16B1a"]),
    ],
)
def test_address_query(q: str, expected: list[str]) -> None:
    assert address_query(q) == expected


@pytest.mark.parametrize(
    "q",
    [
        "declarer called the jack from dummy, law 46",
        "law 46 dummy",
        "revoke penalty",
        "45",  # a bare number is never a law
        "4H",
        "3NT doubled",
        "",
        "what does 45C4b say",
    ],
)
def test_address_query_rejects(q: str) -> None:
    assert address_query(q) is None


# --------------------------------------------------------------------------------------------------
# Structure helpers
# --------------------------------------------------------------------------------------------------


def test_parts_and_depth() -> None:
    assert parts("45") == (45, None, None, None)
    assert parts("45C4b") == (45, "C", 4, "b")
    assert [depth(r) for r in ("45", "45C", "45C4", "45C4b")] == [1, 2, 3, 4]


@pytest.mark.parametrize("bad", ["", "0", "94", "45c", "45C0", "45Cb", "45I", "C4", "45C4f", "L45", " 45"])
def test_parts_rejects(bad: str) -> None:
    with pytest.raises(ValueError):
        parts(bad)
    assert not is_canonical(bad)


def test_parent_chain() -> None:
    assert parent("45C4b") == "45C4"
    assert parent("45C4") == "45C"
    assert parent("45C") == "45"
    assert parent("45") is None
    assert ancestors("45C4b") == ["45", "45C", "45C4"]
    assert ancestors("45") == []


@pytest.mark.parametrize(
    ("ref", "prefix", "expected"),
    [
        ("45C4b", "45C4", True),
        ("45C4b", "45C", True),
        ("45C4b", "45", True),
        ("45C4b", "45C4b", True),
        ("45C", "45C4", False),
        ("45", "4", False),
        ("45C4b", "45C4a", False),
        ("45C4", "45D", False),
        ("45C1", "45C10", False),
    ],
)
def test_extends(ref: str, prefix: str, expected: bool) -> None:
    assert extends(ref, prefix) is expected


def test_sort_key_numeric() -> None:
    refs = ["45C10", "46", "9", "45C", "45", "45A", "45C2", "45C10a", "10"]
    assert sorted(refs, key=sort_key) == ["9", "10", "45", "45A", "45C", "45C2", "45C10", "45C10a", "46"]


@pytest.mark.parametrize(
    ("lang", "expected"),
    [
        ("en", "Law 45C4(b)"),
        ("it", "art. 45C4b"),
        ("el", "Νόμος 45Γ4β"),
        ("fr", "Loi 45C4b"),
        ("de", "Regel 45C4b"),
        ("es", "Ley 45C4b"),
        ("nl", "Wet 45C4b"),
    ],
)
def test_render(lang: str, expected: str) -> None:
    assert render("45C4b", lang) == expected


def test_render_greek_sections() -> None:
    assert [render(f"45{s}", "el") for s in "ABCDEFGH"] == [
        "Νόμος 45Α", "Νόμος 45Β", "Νόμος 45Γ", "Νόμος 45Δ",
        "Νόμος 45Ε", "Νόμος 45ΣΤ", "Νόμος 45Ζ", "Νόμος 45Η",
    ]
    assert render("45", "en") == "Law 45"


def test_render_rejects() -> None:
    with pytest.raises(ValueError):
        render("45C4b", "xx")
    with pytest.raises(ValueError):
        render("99", "en")


# --------------------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------------------


@st.composite
def refs(draw: st.DrawFn) -> str:
    """Random valid canonical refs, nesting respected."""
    ref = str(draw(st.integers(1, 93)))
    if draw(st.booleans()):
        ref += draw(st.sampled_from("ABCDEFGH"))
        if draw(st.booleans()):
            ref += str(draw(st.integers(1, 9)))
            if draw(st.booleans()):
                ref += draw(st.sampled_from("abcde"))
    return ref


@given(refs(), st.sampled_from(LANGS))
def test_render_round_trip(ref: str, lang: str) -> None:
    text = render(ref, lang)
    assert parse_refs(text) == [ref]
    assert canonical(text) == ref
    assert address_query(text) == [ref]


CONTEXTS = ["vedi {} e poi", "(see {}).", "{}, ", "**{}**", "Σύμφωνα με {}·", "{}\n", "— {} —"]


@given(refs(), st.sampled_from(LANGS), st.sampled_from(CONTEXTS))
def test_render_in_context(ref: str, lang: str, template: str) -> None:
    text = template.format(render(ref, lang))
    assert parse_refs(text) == [ref]


@given(refs())
def test_structure_properties(ref: str) -> None:
    assert is_canonical(ref)
    assert canonical(ref) == ref
    assert extends(ref, ref)
    p = parent(ref)
    if depth(ref) == 1:
        assert p is None
    else:
        assert p is not None and extends(ref, p) and not extends(p, ref)
        assert depth(p) == depth(ref) - 1
        assert sort_key(p) < sort_key(ref)
    anc = ancestors(ref)
    assert len(anc) == depth(ref) - 1
    assert all(extends(ref, a) for a in anc)
    assert anc == sorted(anc, key=sort_key)


@given(refs(), refs())
def test_sort_key_consistent(a: str, b: str) -> None:
    assert (sort_key(a) == sort_key(b)) == (a == b)
    if extends(a, b) and a != b:
        assert sort_key(b) < sort_key(a)
    la, lb = parts(a)[0], parts(b)[0]
    if la < lb:
        assert sort_key(a) < sort_key(b)


@given(refs(), refs(), st.sampled_from(LANGS))
def test_two_refs_in_text(a: str, b: str, lang: str) -> None:
    assume(a != b)
    text = f"{render(a, lang)} ... {render(b, lang)}"
    assert parse_refs(text) == [a, b]


def _check_matches(text: str) -> None:
    for m in find_refs(text):
        assert CANONICAL.fullmatch(m.ref), m
        assert 0 <= m.start < m.end <= len(text)
    for r in parse_refs(text):
        assert CANONICAL.fullmatch(r)
    c = canonical(text)
    assert c is None or CANONICAL.fullmatch(c)
    q = address_query(text)
    assert q is None or (q and all(CANONICAL.fullmatch(r) for r in q))


@settings(max_examples=500)
@given(st.text())
def test_fuzz_arbitrary_text(text: str) -> None:
    _check_matches(text)


# Text built from the pieces the grammar cares about reaches far more of its branches than st.text().
_PIECES = st.sampled_from([
    "Law", "Laws", "art.", "artt.", "L", "Νόμος", "Νόμους", "§", " ", "  ", "\u00a0", ",", "/", "-", "–",
    "(", ")",
    ".", "**", "°", "e", "o", "and", "και", "A", "C", "E", "H", "b", "a", "ΣΤ", "Γ", "β", "paragrafo", "del",
    "to", "0", "1", "2", "4", "9", "10", "45", "93", "94", "2011", "SA", "NT", "♠", "tricks", "Board",
])


@settings(max_examples=1000)
@given(st.lists(_PIECES, max_size=14).map("".join))
def test_fuzz_grammar_pieces(text: str) -> None:
    _check_matches(text)


def test_a_titles_range_is_the_documents_scope():
    assert scope_of("Errori frequenti – Art. 30-64") == [str(n) for n in range(30, 65)]
    assert parse_refs("Errori frequenti – Art. 30-64") == ["30"]  # in running text: not a range
    assert scope_of("Artt. 30-32, 50, 54-56") == ["30", "31", "32", "50", "54", "55", "56"]
    assert scope_of("Results 30-64 after ten boards") == []


@pytest.mark.parametrize(("text", "refs"), [
    ("Ν.45Γ4β", ["45C4b"]), ("ο Ν. 64Α λέει", ["64A"]), ("βλ. Ν.64Α και Ν.16Γ", ["64A", "16C"]),
    ("Στο board 12 ν 3 φύλλα", []),  # a letter ν before a number, undotted, is no law
])
def test_greek_abbreviation_of_law(text, refs):
    assert parse_refs(text) == refs


def test_greek_abbreviation_opens_the_law():
    assert canonical("Ν.45Γ4β") == "45C4b" and address_query("Ν. 45Γ4β") == ["45C4b"]


@pytest.mark.parametrize(("text", "ref"), [
    ("art.45/C/4/b", "45C4b"), ("art.64/A/1", "64A1"), ("art.72/B1", "72B1"), ("art. 43/B2(b)", "43B2b"),
])
def test_slashes_between_every_component(text, ref):
    assert canonical(text) == ref and parse_refs(text) == [ref]


def test_a_slash_between_law_numbers_still_lists_them():
    assert parse_refs("Laws 45/46") == ["45", "46"] and parse_refs("Law 45C/46B") == ["45C", "46B"]
