"""Glossary data validity, matcher behaviour and cross-language query expansion."""

from __future__ import annotations

import re
import tomllib
import unicodedata
from pathlib import Path

import pytest

from kb.glossary import (
    GLOSSARY_DIR,
    LANGS,
    REQUIRED_LANGS,
    Concept,
    Glossary,
    GlossaryError,
    default_glossary,
    question_glossary,
)

LAW_RE = re.compile(r"^\d{1,2}([A-H](\d([a-e])?)?)?$")


@pytest.fixture(scope="module")
def g() -> Glossary:
    return default_glossary()


def ids(glossary: Glossary, text: str) -> list[str]:
    return [h.concept.id for h in glossary.match(text)]


# ---------------------------------------------------------------- data validity


def test_glossary_files_exist_and_parse():
    files = sorted(GLOSSARY_DIR.glob("*.toml"))
    assert any(f.name == "concepts.toml" for f in files)
    for f in files:
        with f.open("rb") as fh:
            assert isinstance(tomllib.load(fh).get("concept"), list)


def test_at_least_180_concepts_with_unique_ids(g):
    assert len(g.concepts) >= 180
    all_ids = [c.id for c in g.concepts]
    assert len(all_ids) == len(set(all_ids))
    assert all(re.fullmatch(r"[a-z][a-z0-9]*(_[a-z0-9]+)*", i) for i in all_ids)


def test_every_concept_has_it_en_el_terms(g):
    for c in g.concepts:
        for lang in REQUIRED_LANGS:
            assert c.terms.get(lang), f"{c.id} lacks {lang}"
            assert all(t.strip() for t in c.terms[lang]), c.id
        assert set(c.terms) <= set(LANGS), c.id


def test_laws_are_canonical(g):
    with_laws = [c for c in g.concepts if c.laws]
    assert len(with_laws) > 100
    for c in with_laws:
        for law in c.laws:
            assert LAW_RE.match(law), f"{c.id}: {law}"


def test_broader_concepts_exist(g):
    for c in g.concepts:
        for b in c.broader:
            assert b in g and b != c.id


def test_every_term_matches_its_own_concept(g):
    """A term alone is found whole, as (at least) its own concept: catches typos and shadowed terms."""
    for c in g.concepts:
        for lang, terms in c.terms.items():
            for term in terms:
                hits = g.match(term)
                own = [h for h in hits if h.concept.id == c.id]
                assert own, f"{c.id} ({lang}) term {term!r} matched {[h.concept.id for h in hits]}"
                assert (own[0].start, own[0].end) == (0, len(term)), f"{c.id}: {term!r}"


def test_key_bridge_terms_are_present(g):
    expected = {
        "declarer": ["dichiarante", "εκτελεστής", "declarer"],
        "dummy": ["morto", "μορ", "dummy"],
        "revoke": ["renonce", "ρενόνς", "revoke"],
        "trick": ["presa", "λεβέ", "trick"],
        "opening_lead": ["attacco iniziale", "αντάμ", "opening lead"],
        "lho": ["ΑΣΑ", "LHO"],
        "rho": ["ΑΣΔ", "RHO"],
        "trump": ["atout", "ατού", "trump"],
        "queen": ["donna", "ντάμα", "queen"],
        "spades": ["picche", "πίκα", "spades"],
        "penalty_card": ["carta penalizzata", "τιμωρημένο φύλλο", "penalty card"],
        "director": ["arbitro", "Διαιτητής", "director"],
    }
    for cid, words in expected.items():
        for w in words:
            assert cid in ids(g, w), (cid, w)


# ---------------------------------------------------------------- validation errors


def _write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "bad.toml"
    path.write_text(body, encoding="utf-8")
    return path


GOOD = """
[[concept]]
id = "thing"
laws = ["46B2"]
it = ["cosa"]
en = ["thing"]
el = ["πράγμα"]
"""


def test_load_custom_file(tmp_path):
    gl = Glossary.load([_write(tmp_path, GOOD)])
    assert [c.id for c in gl.concepts] == ["thing"]
    assert ids(gl, "a THING here") == ["thing"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (GOOD.replace('el = ["πράγμα"]\n', ""), "missing required language 'el'"),
        (GOOD.replace('"46B2"', '"46b2"'), "not in canonical form"),
        (GOOD.replace('"46B2"', '"L46"'), "not in canonical form"),
        (GOOD + GOOD, "duplicate id"),
        (GOOD.replace('id = "thing"', 'id = "Thing"'), "invalid id"),
        (GOOD + 'colour = ["x"]\n', "unknown keys"),
        (GOOD + 'weak_terms = ["other"]\n', "weak term"),
        (GOOD + 'broader = ["nowhere"]\n', "broader"),
        (GOOD + 'implied_by = [["nowhere", "thing"]]\n', "implied_by concept 'nowhere'"),
        (GOOD + 'implied_by = ["nowhere"]\n', "implied_by must be a list of lists"),
        (GOOD + 'implied_by = [["nowhere"]]\n', "two or more"),
        (GOOD + 'implied_reach = 1\n', "go with implied_by"),
        (GOOD + 'overrides = ["nowhere"]\n', "overridden concept 'nowhere'"),
        (GOOD + 'overrides = ["thing"]\n', "or itself"),
        (GOOD + 'implied_reach = 9\nimplied_by = [["thing", "thing"]]\n', "implied_reach must be 0 to 6"),
        (GOOD.replace('it = ["cosa"]', 'it = []'), "empty term list"),
        (GOOD.replace('it = ["cosa"]', 'it = ["  "]'), "non-empty strings"),
    ],
)
def test_invalid_data_is_rejected_naming_the_concept(tmp_path, body, message):
    with pytest.raises(GlossaryError) as err:
        Glossary.load([_write(tmp_path, body)])
    assert message in str(err.value)
    if "invalid id" not in message:
        assert "'thing'" in str(err.value)


def test_broken_toml_is_reported(tmp_path):
    with pytest.raises(GlossaryError, match="bad.toml"):
        Glossary.load([_write(tmp_path, "[[concept]\nid = ")])


# ---------------------------------------------------------------- matching


@pytest.mark.parametrize("text", ["ρενονς", "ΡΕΝΟΝΣ", "ρενόνς", "Ρενόνς", "RENONCE", "renonce", "Revoke"])
def test_revoke_accent_and_case_insensitive(g, text):
    assert "revoke" in ids(g, text)


@pytest.mark.parametrize("text", ["Dichiarante", "dichiaranti", "DICHIARANTE", "εκτελεστης", "ΕΚΤΕΛΕΣΤΉΣ", "declarer"])
def test_declarer_forms(g, text):
    assert ids(g, text) == ["declarer"]


def test_hit_reports_language_and_term(g):
    (hit,) = g.match("ρενονς")
    assert hit.lang == "el" and hit.term == "ρενόνς" and not hit.weak
    (hit,) = g.match("il morto")
    assert hit.concept.id == "dummy" and hit.lang == "it"


@pytest.mark.parametrize(
    ("text", "concept"),
    [
        ("una carta penalizzata", "penalty_card"),
        ("το τιμωρημένο φύλλο", "penalty_card"),
        ("passo fuori turno", "pass_out_of_turn"),
        ("πάσο εκτός σειράς", "pass_out_of_turn"),
        ("an insufficient bid", "insufficient_bid"),
        ("informazione non autorizzata", "unauthorized_information"),
        ("αθέμιτη πληροφορία", "unauthorized_information"),
        ("designazione involontaria", "unintended_designation"),
        ("η αρχική έξοδος", "opening_lead"),
        ("carta d’attacco", "opening_lead"),  # typographic apostrophe
        ("non-offending side", "non_offending_side"),
        ("ricapitolazione della licitazione", "auction_review"),
    ],
)
def test_multi_word_terms(g, text, concept):
    assert concept in ids(g, text)


@pytest.mark.parametrize(("text", "concept"), [
    ("OLOOT by West, accepted", "opening_lead_out_of_turn"), ("East has an MPC", "major_penalty_card"),
    ("North made an IB", "insufficient_bid"), ("COOT by South", "call_out_of_turn"),
    ("a BOOT, then partner passed", "bid_out_of_turn"), ("POOT in first seat", "pass_out_of_turn"),
    ("there was UI from the BIT", "unauthorized_information"),
])
def test_forum_abbreviations(g, text, concept):
    assert concept in ids(g, text)


def test_abbreviations_that_are_words_elsewhere_are_not_terms(g):
    assert not {"misinformation", "logical_alternative"} & set(ids(g, "mi ha detto la carta, los dos"))


def test_longest_match_wins(g):
    hits = g.match("the opening lead was a spade")
    assert [h.concept.id for h in hits][:1] == ["opening_lead"]
    assert "lead" not in [h.concept.id for h in hits]
    assert ids(g, "carta penalizzata maggiore") == ["major_penalty_card"]
    assert ids(g, "a lead out of turn") == ["lead_out_of_turn"]
    assert ids(g, "the revoke was established") == ["established_revoke"]
    assert ids(g, "non-offending side") == ["non_offending_side"]
    assert ids(g, "Ovest ha attaccato fuori turno") == ["west", "lead_out_of_turn"]


def test_hits_do_not_overlap_and_are_ordered(g):
    text = "Il dichiarante chiama dal morto, Est fa renonce; carta penalizzata maggiore e punteggio arbitrale."
    hits = g.match(text)
    assert len(hits) >= 5
    ends = 0
    for h in hits:
        assert h.start >= ends
        ends = h.end


def test_spans_point_into_the_original_text(g):
    text = "Allora — il DICHIARANTE, dopo l'attacco iniziale, ha fatto RENONCE (ρενόνς)!"
    hits = g.match(text)
    spans = {h.concept.id: text[h.start : h.end] for h in hits}
    assert spans["declarer"] == "DICHIARANTE"
    assert spans["opening_lead"] == "attacco iniziale"
    assert [text[h.start : h.end] for h in hits if h.concept.id == "revoke"] == ["ha fatto RENONCE", "ρενόνς"]


def test_spans_with_decomposed_accents(g):
    text = "il " + unicodedata.normalize("NFD", "ρενόνς") + " di Sud"
    hit = next(h for h in g.match(text) if h.concept.id == "revoke")
    assert text[hit.start : hit.end] == unicodedata.normalize("NFD", "ρενόνς")


def test_multi_word_span_covers_the_whole_phrase(g):
    text = "East made a LEAD   OUT OF\nTURN."
    assert ids(g, text) == ["east", "lead_out_of_turn"]
    hit = g.match(text)[1]
    assert text[hit.start : hit.end] == "LEAD   OUT OF\nTURN"


@pytest.mark.parametrize("text", ["misleading", "mortadella", "premorto", "ricapitolazionex", "leader-board"])
def test_no_match_inside_other_words(g, text):
    found = ids(g, text)
    assert "lead" not in found and "dummy" not in found and "auction_review" not in found


def test_light_inflection_tolerance(g):
    assert "penalty_card" in ids(g, "tre carte penalizzate")
    assert "named_card" in ids(g, "due carte nominate")  # carta nominata, both words inflected
    assert "opponent" in ids(g, "του αντιπάλου")
    assert "defender" in ids(g, "οι αμυνόμενοι")
    assert "hearts" in ids(g, "δύο κούπες")
    assert "table" in ids(g, "sulla tavola")
    assert "revoke" in ids(g, "revokes")
    assert "declarer" in ids(g, "declarers")


def test_inflection_tolerance_stays_precise(g):
    assert "trick" not in ids(g, "presso il bar")  # presa / presso
    assert "player" not in ids(g, "play the hand")  # player / play
    assert "player" not in ids(g, "ha giocato")  # giocatore / giocato
    assert "hand" not in ids(g, "mana")  # mano: too short for inflection
    assert "double" not in ids(g, "al contrario")  # contrare / contrario
    assert "face_up" not in ids(g, "facetious")
    assert "communication_between_partners" not in ids(g, "Gestern im Club")  # Geste + two consonants
    assert "communication_between_partners" in ids(g, "seine Gesten")


def test_german_tables_are_not_dummy(g):
    """'Tisch' is the dummy, but 'Tische' and 'Tischen' are tables, whatever the inflection rule allows."""
    assert ids(g, "der Tisch spielte") == ["dummy"]
    assert ids(g, "Paarturnier an 9 Tischen") == ["table"]
    assert "dummy" not in ids(g, "etwa 35 Tische")


def test_weak_terms_are_flagged_and_kept_out_of_ids(g):
    hits = g.match("ho detto contro")
    assert [(h.concept.id, h.weak) for h in hits] == [("double", True)]
    assert g.concept_ids("giocare contro il dichiarante") == ["declarer"]
    assert g.concept_ids("contro fuori turno") == ["double_out_of_turn"]
    assert "double" in g.concept_ids("ho detto contro", include_weak=True)
    assert "ten" not in g.concept_ids("ten tricks")  # a weak concept


def test_weak_term_counts_beside_a_strong_concept_of_the_same_law(g):
    """Context decides an ambiguous phrase: "pur avendone" alone is nothing, beside a failure to follow
    suit (Law 61) it is the revoke (Laws 61-64); a negated or unrelated concept is no such context."""
    assert "revoke" not in g.concept_ids("pur avendone due, ha giocato la dama")
    assert "revoke" in g.concept_ids("non ha risposto a picche pur avendone")
    assert "revoke" in g.concept_ids("East did not follow suit although he had a club")
    assert "revoke" not in g.concept_ids("there was no failure to follow suit, although he had a club")
    assert "double" not in g.concept_ids("il dichiarante gioca contro il morto")


def test_a_card_named_with_a_suit_symbol_is_a_card(g):
    """Terms say "dropped a card"; narratives name the card: "el 8♥", "the ♥8", "il ♠K", "his ♣4"."""
    def found(text: str) -> dict[str, str]:
        return {h.concept.id: text[h.start:h.end] for h in g.match(text)}

    assert found("se le cayó el 8♥ boca arriba")["dropped_card"] == "se le cayó el 8♥"
    assert found("declarer dropped the ♥8 on the table")["declarer_exposes_card"] == "declarer dropped the ♥8"
    assert found("West turned his ♣4 face down")["quitted_trick"] == "turned his ♣4"
    assert found("ha girato la ♥10.")["quitted_trick"] == "ha girato la ♥10"
    assert "quitted_trick" not in found("ha girato la testa")  # only a card stands for "la carta"
    assert found("♠AKQ ♥J109 ♦— ♣x") == {}  # holdings are not card mentions


def test_a_story_told_in_the_first_person_reads_terms_written_in_the_third():
    """Terms say "his partner", "του συμπαίκτη του"; players say "my partner", "του παρτενέρ μου"."""
    tiny = Glossary([
        Concept("defender_lead", ("56",), {"en": ("his partner had won the trick",),
                                           "el": ("τη λεβέ την είχε πάρει ο συμπαίκτης του",)}),
        Concept("took_back", ("47",), {"en": ("took his card back",), "el": ("πήρε πίσω το φύλλο",)}),
        Concept("told_to_lead", ("56",), {"en": ("your lead",)}),
        Concept("lead_face_down", ("41A",), {"en": ("lead face down",)}),
    ])
    assert ids(tiny, "but my partner had won the trick") == ["defender_lead"]
    assert ids(tiny, "τη λεβέ την είχε πάρει ο παρτενέρ μου") == ["defender_lead"]
    assert ids(tiny, "she took her card back") == ["took_back"]
    assert ids(tiny, "πήρε πίσω το χαρτί") == ["took_back"]  # a card is φύλλο, χαρτί or κάρτα
    # "your" is not grouped: "your lead" is what a player is told, "his lead" what he did
    assert ids(tiny, "LHO puts his lead face down") == ["lead_face_down"]


def test_a_term_that_names_a_suit_is_about_any_suit():
    tiny = Glossary([
        Concept("revoke_inquiry", ("61B",), {"en": ("no spades, partner",), "el": ("δεν έχεις πίκα",)}),
        Concept("hearts", (), {"en": ("hearts",), "el": ("κούπες",)}),
    ])
    assert ids(tiny, "no clubs, partner?") == ["revoke_inquiry"]
    assert ids(tiny, "«δεν έχεις κούπες;» ρώτησε") == ["revoke_inquiry"]  # singular or plural, any suit
    assert ids(tiny, "he led spades") == []  # a suit's own one-word term stays that suit
    assert ids(tiny, "he led hearts") == ["hearts"]


def test_the_phase_a_story_is_told_in(g):
    assert g.story_phase("West passed before dealer and then I opened 1♠ over it") == "auction"
    assert g.story_phase("declarer discarded a club although he still had a heart: a revoke") == "play"
    assert g.story_phase("the director was called") is None  # nothing of either phase
    assert g.story_phase("after a bid out of turn, the opening lead was a penalty card") is None  # both


def test_shared_term_yields_one_hit_per_concept(g):
    hits = g.match("η αγορά")
    assert {h.concept.id for h in hits} == {"auction", "bid"}
    assert len({(h.start, h.end) for h in hits}) == 1


def test_empty_and_punctuation_only_text(g):
    assert g.match("") == []
    assert g.match(" ,.;— ♠♥♦♣ ") == []
    assert g.expand("") == ""
    assert g.concept_ids("") == []


# ---------------------------------------------------------------- expand / concept_ids / laws


def test_italian_revoke_query_expands_to_greek_and_english(g):
    expanded = g.expand("il difensore ha fatto renonce alla quinta presa")
    assert "revoke" in expanded
    assert "ρενόνς" in expanded
    assert "defender" in expanded and "αμυνόμενος" in expanded


def test_greek_dummy_query_expands_to_italian_and_english(g):
    expanded = g.expand("ο μορ άγγιξε ένα φύλλο")
    assert "morto" in expanded
    assert "dummy" in expanded


def test_expand_respects_languages_and_per_lang(g):
    expanded = g.expand("carta penalizzata maggiore", langs=("en",))
    assert expanded == "major penalty card major penalty cards"
    assert g.expand("carta penalizzata maggiore", langs=("en",), per_lang=1) == "major penalty card"
    assert "grosse" not in g.expand("renonce", langs=("de", "fr")).lower()
    assert "Revoke" in g.expand("renonce", langs=("de",))


def test_expand_does_not_repeat_terms(g):
    expanded = g.expand("renonce renonce RENONCE", langs=("it", "fr"))
    assert expanded.split().count("renonce") == 1


def test_concept_ids_order_and_broader(g):
    text = "Il morto ha una carta penalizzata maggiore? No, il dichiarante."
    assert g.concept_ids(text) == ["dummy", "major_penalty_card", "declarer"]
    with_broader = g.concept_ids(text, broader=True)
    assert with_broader[:3] == ["dummy", "major_penalty_card", "penalty_card"]
    assert set(with_broader) == {"dummy", "major_penalty_card", "penalty_card", "declarer"}


def test_laws_for(g):
    assert g.laws_for("carta penalizzata maggiore") == ["50D"]
    assert "46B5" in g.laws_for("declarer said 'play anything' from dummy")


def test_default_glossary_is_cached():
    assert default_glossary() is default_glossary()


# ---------------------------------------------------------------- speed sanity


def test_matching_a_long_text_runs(g):
    sentence = (
        "Sud è dichiarante a 3SA; il morto gioca la carta sbagliata, Est fa renonce e la renonce "
        "viene consumata. Ο εκτελεστής ζητά φύλλο από το μορ, ο ΑΣΑ βγήκε εκτός σειράς. "
        "The defender's card held so that partner could see it becomes a penalty card. "
    )
    text = " ".join([sentence] * 80)
    assert len(text.split()) >= 3000
    hits = g.match(text)
    assert len(hits) > 500
    assert {"declarer", "revoke", "established_revoke", "penalty_card"} <= {h.concept.id for h in hits}


@pytest.mark.parametrize("text", [
    "there was no revoke", "it is not a revoke", "non c'è renonce", "nessuna renonce", "δεν υπάρχει ρενόνς",
    "il n'y a pas de renonce", "kein Revoke", "no hay renuncio",
])
def test_negated_concepts_say_what_did_not_happen(g, text):
    hits = [h for h in g.match(text) if h.concept.id == "revoke"]
    assert hits and all(h.negated for h in hits)
    assert "revoke" not in g.concept_ids(text)
    assert not set(g.laws_for(text)) & {"61", "62", "63", "64"}
    assert "renonce" not in g.expand(text, ("it",)).lower()


@pytest.mark.parametrize("text", [
    "East revoked", "he did not notice the revoke", "the revoke was not established", "not. Revoke", "No, a revoke",
    "he corrected it without a revoke penalty",  # "without": the missing thing is often the irregularity
])
def test_only_a_negating_word_right_before_negates(g, text):
    assert "revoke" in g.concept_ids(text)


def test_without_negated_blanks_only_the_negated_mention(g):
    text = "Un difensore vuole riprendere la carta, non c'è renonce."
    out = g.without_negated(text)
    assert len(out) == len(text) and "renonce" not in out and "difensore" in out
    assert g.without_negated("East revoked") == "East revoked"


def test_negated_words_left_out_of_the_lexical_query():
    from kb.lexical import query_words

    assert not any(w.startswith("renon") for w in query_words("La carta è giocata, non c'è renonce.", "it"))
    assert any(w.startswith("renon") for w in query_words("La carta è giocata: renonce!", "it"))
    # a query's expansion is a list of terms: "non" in one term does not negate the next
    assert not any(w.startswith("renon") for w in query_words("non c'è renonce", "it"))
    assert any(w.startswith("renon") for w in query_words("non c'è renonce", "it", negations=False))


def _tiny(**terms: list[str]) -> Glossary:
    return Glossary([Concept(cid, ("47D",), {"en": tuple(ts)}) for cid, ts in terms.items()])


def test_a_question_may_put_one_extra_word_inside_a_long_term():
    tiny = _tiny(change_of_play=["change his card"], penalty_card=["penalty card"])
    q = tiny.for_questions
    assert ids(q, "he wants to change his lead card") == ["change_of_play"]
    hit = q.match("he wants to change his lead card")[0]
    assert "he wants to change his lead card"[hit.start:hit.end] == "change his lead card"
    assert ids(tiny, "he wants to change his lead card") == []  # passages are read word for word
    assert ids(q, "a penalty major card") == []  # a two-word term never has a gap
    assert ids(q, "change his two cards") == []  # one extra word at most


def test_a_gap_never_skips_a_negation_and_never_beats_a_word_for_word_match():
    tiny = _tiny(established=["revoke was established"], revoke=["revoke"], quitted=["turned his card"],
                 face_down=["turned card face down"])
    q = tiny.for_questions
    assert ids(q, "the revoke was not established") == ["revoke"]
    assert ids(q, "he turned his card face down") == ["quitted"]


def test_the_question_view_shares_concepts_but_not_caches(g):
    q = question_glossary()
    assert q is g.for_questions and q.concepts is g.concepts
    assert q.gap == 1 and g.gap == 0
    text = "declarer wants to change his lead card"
    assert "change_of_play" in q.concept_ids(text) and "change_of_play" not in g.concept_ids(text)


@pytest.mark.parametrize("text, concept", [
    ("at exactly the same moment West played a club", "simultaneous_plays"),
    ("η Δύση έριξε ένα φύλλο την ίδια στιγμή", "simultaneous_plays"),
    ("in dummy a small heart was hidden behind the clubs", "dummy_card_hidden"),
    ("Im Strohmann lag ein kleines Herz versteckt unter den Pik", "dummy_card_hidden"),
    ("Il a fait tomber la dame de cœur", "dropped_card"),
    ("East told his partner: don't worry, I've got the ace", "names_card_in_hand"),
    ("West led out of turn and declarer called a small club from dummy", "played_to_lead_out_of_turn"),
    ("Is it legal to revoke on purpose if you're prepared to take the penalty?", "deliberate_infringement"),
    ("Ma è stato lui a dirmi di giocare!", "told_to_lead"),
    ("Der Alleinspieler fragt den Strohmann: 'Was meinst du, nehmen wir das an?'", "consulting_partner"),
    ("My partner, who'll be dummy, says 'can we have the bidding again please?'", "auction_review"),
    ("Before North called, West said 'sorry, we play it as a multi'", "correction_of_explanation"),
    ("Ο εκτελεστής τον κράτησε φανερό, σχεδόν ακουμπισμένο στο τραπέζι", "touching_the_table"),
    ("Yo, por reflejo, empiezo a bajar mis cartas como si fuera el muerto", "declarer_spreads_hand"),
    ("The automatic transfer is not enough: they'd have run five clubs", "insufficiently_compensated"),
    ("Ο Ανατολικός είπε «τον άσο ατού τον έχω εγώ»", "names_card_in_hand"),
    ("El muerto empujó el as hacia delante", "dummy_suggests_play"),
    ("hang on, it was my lead", "lead_out_of_turn"),
    ("Le déclarant réclame le reste", "claim"),
    ("South led a heart and North asked him: no hearts partner?", "revoke_inquiry"),
    ("Hold on, you're on the table, said East", "declarer_lead_out_of_turn"),
    ("Ο Νότος είχε την έξοδο, αλλά ο ζογκαδόρος έπαιξε αντί να βγει από το μορ", "declarer_lead_out_of_turn"),
    ("East led a spade, although his partner had won the trick", "defender_lead_out_of_turn"),
])
def test_table_talk_phrasings(text, concept):
    assert concept in question_glossary().concept_ids(text)


@pytest.mark.parametrize("text", ["Dummy has no spades, so declarer ruffs", "Il morto non ha picche",
                                  "El muerto no tiene picas", "Ο μορ δεν έχει πίκες", "Le mort n'a pas de pique",
                                  "Μπορώ να του απαγορεύσω να κόψει αν δεν έχει καρό;"])
def test_saying_who_holds_what_is_no_revoke_inquiry(text):
    assert "revoke_inquiry" not in question_glossary().concept_ids(text)


@pytest.mark.parametrize("text", ["I found a diamond hiding behind my clubs",
                                  "West's ♥7 was stuck behind his diamonds"])
def test_a_card_hidden_in_a_players_own_hand_is_not_dummys(text):
    """Law 64B3 is about a card hidden in dummy; hidden in one's own hand it is an ordinary revoke."""
    ids = question_glossary().concept_ids(text)
    assert "card_hidden" in ids and "dummy_card_hidden" not in ids


def test_a_discard_then_a_hidden_card_of_the_suit_is_a_revoke():
    ids = question_glossary().concept_ids("I pitched a club and then found a diamond hiding behind my clubs")
    assert "revoke" in ids and "dummy_card_hidden" not in ids
    assert "dummy_card_hidden" in question_glossary().concept_ids("dummy still had the ♦3 buried under the clubs")


def test_i_dont_accept_it_is_a_refused_lead_only_beside_a_lead_out_of_turn():
    q = question_glossary()
    assert "lead_refused" in q.concept_ids("I thought my partner had won the trick and led; declarer said 'I don't accept it'")
    assert "lead_refused" not in q.concept_ids("Declarer claimed the rest and East said 'I don't accept it'")


def test_changing_ones_mind_about_a_played_card_points_to_law_47F():
    """A card once played stays played (47F) unless 47A-E allow it back: the law a change of mind meets."""
    hints = question_glossary().law_hints("He played the ♥2 and then said 'sorry, I want to play the ten instead'")
    assert "47F" in hints


def test_a_claim_by_putting_the_hand_down_is_not_declarer_becoming_dummy():
    ids = question_glossary().concept_ids("Declarer put his hand down and said the rest were his")
    assert "declarer_spreads_hand" not in ids


def test_doing_something_on_purpose_alone_is_no_deliberate_infringement():
    """'deliberately', 'apposta' are weak: any story may say them; paying the penalty on purpose is not."""
    assert "deliberate_infringement" not in question_glossary().concept_ids("He deliberately thought for a minute")


def test_ambiguous_table_talk_needs_context():
    """'réclame' is also to demand, 'c'est à vous' is any turn: alone they are no claim, no misled lead."""
    q = question_glossary()
    assert "claim" not in q.concept_ids("La défense réclame une carte pénalisée")
    assert "told_to_lead" not in q.concept_ids("c'est à vous")
    assert "told_to_lead" in q.concept_ids("le déclarant dit « c'est à vous », il veut la reprendre")


@pytest.mark.parametrize("text", ["East opened 1♠ out of turn", "Ο Ανατολή άνοιξε 1♠ εκτός σειράς"])
def test_a_bid_inside_a_term_is_the_skipped_word(text):
    """No single-word term may start where a longer term matches with a gap: 'opened' alone would win."""
    assert "bid_out_of_turn" in question_glossary().concept_ids(text)


# ---------------------------------------------------------------- concepts said in parts

PARTS = """
[[concept]]
id = "sneeze"
it = ["starnuto"]
en = ["sneeze", "sneezed"]
el = ["φτάρνισμα"]

[[concept]]
id = "loudly"
weak = true
it = ["forte"]
en = ["loudly"]
el = ["δυνατά"]

[[concept]]
id = "early"
weak = true
it = ["presto"]
en = ["too early"]
el = ["νωρίς"]

[[concept]]
id = "loud_sneeze"
laws = ["74B"]
implied_by = [["sneeze", "loudly"]]
it = ["starnuto forte"]
en = ["loud sneeze"]
el = ["δυνατό φτάρνισμα"]

[[concept]]
id = "early_loud"
implied_by = [["early", "loudly"]]
it = ["presto e forte"]
en = ["early and loud"]
el = ["νωρίς και δυνατά"]

[[concept]]
id = "sneeze_early"
implied_by = [["sneeze", "early"]]
implied_reach = 1
it = ["starnuto precoce"]
en = ["early sneeze"]
el = ["πρόωρο φτάρνισμα"]
"""


@pytest.fixture(scope="module")
def parts(tmp_path_factory) -> Glossary:
    path = tmp_path_factory.mktemp("glossary") / "parts.toml"
    path.write_text(PARTS, encoding="utf-8")
    return Glossary.load([path])


@pytest.mark.parametrize("text", ["He sneezed loudly.", "He sneezed, very very loudly, at trick two.",
                                  "Loudly, East sneezed.", "Ha fatto uno starnuto forte"])
def test_parts_within_a_few_words_say_the_whole(parts, text):
    assert "loud_sneeze" in parts.concept_ids(text)
    assert parts.laws_for(text) == ["74B"]


@pytest.mark.parametrize("text", [
    "He sneezed at the very start of the second board, loudly.",  # too far apart
    "He sneezed. Loudly, his partner asked for the director.",  # another sentence
    "He sneezed and loudly called the director.",  # another clause
    "There was no sneeze loudly enough to hear.",  # what did not happen
])
def test_parts_apart_or_negated_say_nothing_more(parts, text):
    assert any(h.concept.id == "sneeze" for h in parts.match(text))
    assert "loud_sneeze" not in parts.concept_ids(text)


@pytest.mark.parametrize(("text", "said"), [
    ("He sneezed, and then it was too early.", True),  # a clause join does not stop a reach
    ("He sneezed at trick one. Everyone agreed it was too early.", True),  # the next sentence
    ("He sneezed. Then play went on. It was too early.", False),  # two sentence ends
    ("He sneezed " + "and we went on " * 8 + "too early.", False),  # too many words between
])
def test_implied_reach_lets_the_parts_lie_in_the_next_sentence(parts, text, said):
    assert ("sneeze_early" in parts.concept_ids(text)) is said
    assert "early_loud" not in parts.concept_ids(text)


def test_default_glossary_reads_a_revoke_told_in_two_sentences():
    g = question_glossary()
    assert "revoke" in g.concept_ids("RHO ruffed the third diamond. At the end of the hand he still had a diamond.")
    assert "revoke" not in g.concept_ids("RHO ruffed the third diamond. We played on. Later he still had a diamond.")


@pytest.mark.parametrize(("text", "said"), [
    ("I was in dummy but led from my hand.", True),
    ("I was in dummy. I led from my hand by mistake.", True),
    ("Déclarant, j'étais au mort et j'ai joué de ma main.", True),
    ("Ero in mano e ho giocato dal morto il fante.", True),
    ("Ήμουν στο μορ και έπαιξα από το χέρι μου ένα καρό.", True),
    ("Ich war am Tisch und habe aus der Hand gespielt.", True),
    ("Declarer led from hand; dummy played low.", False),  # an ordinary lead from hand
    ("I was in dummy. We played on. Then I led from hand.", False),  # two sentence ends apart
])
def test_a_lead_from_the_wrong_hand_told_as_where_the_lead_was_and_where_it_came_from(text, said):
    assert ("declarer_lead_out_of_turn" in question_glossary().concept_ids(text)) is said


def test_a_whole_of_weak_parts_only_is_not_said(parts):
    assert parts.concept_ids("too early, loudly") == []


def test_the_whole_is_in_order_of_mention_with_its_parts(parts):
    hits = parts._strong_hits("Then he sneezed loudly", False)
    assert [h.concept.id for h in hits] == ["sneeze", "loud_sneeze"]
    assert hits[1].start == hits[0].start


@pytest.mark.parametrize(("text", "concept"), [
    ("The defender doubled, although it was not his turn.", "double_out_of_turn"),
    ("Ο Νότος πάσαρε πριν έρθει η σειρά του.", "pass_out_of_turn"),
    ("Unser Gegner meinte, der Revoke sei inzwischen etabliert.", "established_revoke"),
    ("¿El renuncio ya está consumado o todavía se puede corregir?", "established_revoke"),
    ("Darf sie den Revoke jetzt noch korrigieren?", "revoke_correction"),
    ("Il difensore ha scartato una picca pur avendo ancora cuori.", "revoke"),
    ("¿El renuncio en la baza ya está consumado?", "established_revoke"),  # Spanish "en" joins no clauses
    ("Ο Ανατολικός έκοψε με ατού ενώ είχε ακόμα κούπα.", "revoke"),
    ("LHO doubled before North had said anything.", "double_out_of_turn"),  # a name inside the term
    ("Il mio avversario ha passato prima che Nord parlasse.", "pass_out_of_turn"),
    ("His opening bid of 1♣ was out of turn.", "bid_out_of_turn"),  # an opening bid
])
def test_default_glossary_reads_concepts_said_in_parts(text, concept):
    assert concept in question_glossary().concept_ids(text)


@pytest.mark.parametrize("text", ["Der Revoke ist noch nicht etabliert.", "El renuncio no está consumado todavía.",
                                  "The revoke was not yet established when he noticed it.",
                                  "Secondo me la renonce non è ancora consumata.",  # "yet" between
                                  "La renonce n'est pas encore consommée, non ?",
                                  "Ovest corregge la renonce prima che sia consumata."])
def test_a_part_negated_after_its_noun_says_no_whole(text):
    assert "established_revoke" not in question_glossary().concept_ids(text)


def test_an_action_in_another_clause_is_not_out_of_turn():
    ids_ = question_glossary().concept_ids("The 1♠ opening came out of turn and then West passed.")
    assert "pass_out_of_turn" not in ids_


def test_simultaneous_plays_override_a_lead_out_of_turn():
    """Both said: the card counts as played after the lead (Law 58), the Laws on leads out of turn
    do not apply; a lead out of turn alone still points to them."""
    g = question_glossary()
    both = g.law_hints("He led out of turn, but at exactly the same moment as declarer led from hand.")
    assert "58" in both and not {"53", "54", "55", "56"} & set(both)
    assert {"53", "54", "55", "56"} <= set(g.law_hints("He led out of turn."))


@pytest.mark.parametrize(("text", "concept"), [
    ("El defensor equivocado hizo la salida boca arriba fuera de turno.", "lead_out_of_turn"),
    ("Le mauvais défenseur a mis son entame face visible hors tour.", "lead_out_of_turn"),
    ("Il dichiarante non accetta l'uscita di Est.", "lead_refused"),
    ("Ovest esce di picche.", "lead"),
    ("Der Alleinspieler hat den Tisch schon gesehen.", "declarer_saw_dummy"),
    ("He could have known that the hesitation would help his partner.", "could_have_known"),
    ("Declarer asked dummy whether he should accept the lead.", "consulting_partner"),
])
def test_default_glossary_reads_story_phrasing(text, concept):
    """Table words for a lead ("esce", "uscita"), a faced lead that still reads as out of turn, and the
    concepts behind Laws 54C, 72B1 and 10C2 as a story says them."""
    assert concept in question_glossary().concept_ids(text)


def test_the_trick_dummy_won_is_no_lead_out_of_turn_by_itself():
    """Who won the last trick is the premise of a story, not the irregularity."""
    ids_ = question_glossary().concept_ids("Le mort avait fait la levée et le déclarant joue de sa main.")
    assert not {"lead_out_of_turn", "declarer_lead_out_of_turn"} & set(ids_)


@pytest.mark.parametrize("text", ["South discarded a heart. 'Oh no, I have a club!'",
                                  "Nord ha scartato una cuori. 'Ah no, ce l'ho!'"])
def test_an_exclamation_before_a_comma_negates_nothing(text):
    """ "Oh no, I have one" says the player has the suit: the "no" ends at the comma (a revoke, or the
    glossary's "ah no, ce l'ho": one being corrected)."""
    assert {"revoke", "revoke_correction"} & set(question_glossary().concept_ids(text))
    assert "revoke" not in question_glossary().concept_ids("South discarded a heart, and no, he did not have a club.")


def test_a_claim_after_a_revoke_establishes_it():
    """Law 63A3: a claim or concession by the revoker's side, told apart from the revoke."""
    g = question_glossary()
    hints = g.law_hints("East revoked in spades at trick 9. At trick 11 West said the rest are ours.")
    assert "63A3" in hints
    assert "63A3" not in g.law_hints("East revoked in spades at trick 9.")


def test_simultaneous_plays_override_every_kind_of_lead_out_of_turn():
    hints = question_glossary().law_hints(
        "Declarer led, and at the same moment West, who thought he had won the trick, faced the ace.")
    assert "58" in hints and not {"53", "56"} & set(hints)


@pytest.mark.parametrize(("text", "law"), [
    ("At trick 5 I could not remember whether it was doubled. May I ask now?", "41C"),
    ("West has a penalty card. May East take it into account when he discards?", "50E"),
    ("East led out of turn and dummy came down before declarer said anything.", "54C"),
])
def test_concepts_told_as_a_story_point_to_their_law(text, law):
    """A question about the contract during the play (41C); what partner makes of a penalty card (50E); a
    lead out of turn after which dummy was spread, so declarer saw it (54C)."""
    assert law in question_glossary().law_hints(text)


def test_talk_of_using_information_alone_says_nothing():
    assert "50E" not in question_glossary().law_hints("May East take it into account when he bids?")


@pytest.mark.parametrize("text", [
    "Declarer called the nine, I covered with the jack, then he changed to the ten. Now I want my jack back.",
    "Il dichiarante ha corretto la carta chiamata dal morto: posso cambiare anch'io la mia?",
])
def test_a_player_wanting_his_card_back_after_a_change_points_to_47D(text):
    assert "47D" in question_glossary().law_hints(text)


def test_a_withdrawn_play_beside_talk_of_information_is_law_16C():
    g = question_glossary()
    assert "16C" in g.law_hints("East took back the king. Later his partner played as if he knew where it was.")
    assert "16C" not in g.law_hints("East took back the king and played low.")


def test_a_long_reach_lets_a_story_name_the_card_first_and_ask_last():
    """implied_reach 6 (30 words per sentence end): the penalty card at the start, the question at the end."""
    g = question_glossary()
    story = ("West dropped the king of spades and it stayed on the table as a penalty card. East won the next "
             "trick. He cashed two diamonds. Then he thought for a long time about his discard. May East take it "
             "into account?")
    assert "50E" in g.law_hints(story)
    assert "50E" not in g.law_hints(story.replace("May East take it into account?", "What now?"))


def test_law_votes_count_mentions_and_mute_routine_concepts():
    g = default_glossary()
    votes = g.law_votes("Declarer claimed the rest; the defenders contested the claim, then the claim was withdrawn.")
    assert max(votes, key=votes.get).startswith("70") or max(votes, key=votes.get).startswith("68")
    routine_only = g.law_votes("Declarer led from dummy.")
    assert routine_only  # a text that names nothing else keeps its routine concepts' laws
    with_revoke = g.law_votes("Declarer led from dummy and West revoked.")
    assert with_revoke and not set(with_revoke) & set(routine_only)  # the revoke is the point, not the lead
    assert g.law_votes("the weather was nice and the coffee hot") == {}


# ---------------------------------------------------------------- Greek typed without accents


ACCENTS = """
[[concept]]
id = "held_card"
it = ["carta tenuta"]
en = ["card held"]
el = ["ο συμπαίκτης το είδε", "κρατούσε το φύλλο", "φύλλο που φάνηκε", "πού είναι το φύλλο"]
"""


def test_greek_without_accents_gets_the_glossarys_spelling(tmp_path):
    gl = Glossary.load([_write(tmp_path, ACCENTS)])
    assert gl.with_accents("ο συμπαικτης του την ειδε") == "ο συμπαίκτης του την είδε"
    assert gl.with_accents("Κρατουσε το ΦΥΛΛΟ") == "Κρατούσε το ΦΥΛΛΟ"  # capitals stay as typed
    # written both ways in the glossary, the unaccented "που" (that) is the commoner: it stays
    assert gl.with_accents("το φυλλο που επεσε") == "το φύλλο που επεσε"
    assert gl.with_accents("είδε, ειδε") == "είδε, είδε"
    assert gl.with_accents("no Greek here") == "no Greek here"


def test_dense_text_restores_accents():
    from kb.search import dense_text

    assert "εκτελεστής" in dense_text("ο εκτελεστης εκανε ρενονς στη λεβε 5")


GREEKLISH = ACCENTS + """
[[concept]]
id = "revoke"
laws = ["61"]
it = ["renonce"]
en = ["revoke"]
el = ["ρενόνς", "ο εκτελεστής έκανε ρενόνς", "έχω ακόμα μπαστούνι", "θα το διορθώσει"]
"""


def test_greeklish_is_read_in_greek_letters(tmp_path):
    gl = Glossary.load([_write(tmp_path, GREEKLISH)])
    # the glossary's words whatever letters spelled each sound (η as i, ω as w, ου as ou, μπ as mp or b)
    greek = gl.from_greeklish("o ektelestis ekane renons, exw akoma bastouni, tha to diorthwsei?")
    assert greek == "ο εκτελεστής έκανε ρενόνς, έχω ακόμα μπαστούνι, θα το διορθώσει?"
    # other words letter by letter, capitals kept
    assert gl.from_greeklish("O ektelestis ekane renons sto paixnidi") == "Ο εκτελεστής έκανε ρενόνς στο παιχνιδι"
    # θ written 8, η written h after t ("ths"), one letter for a doubled one
    assert gl.from_greeklish("o ektelesths ekane renons, 8a to diorthosei") == "ο εκτελεστής έκανε ρενόνς, θα το διορθώσει"
    # a word the glossary has in Latin letters is a loanword: it stays
    assert gl.from_greeklish("o ektelestis ekane revoke") == "ο εκτελεστής έκανε revoke"
    # not Greeklish: English or Italian, too short, or already in Greek letters
    assert gl.from_greeklish("declarer made a revoke, then he said he will correct it") is None
    assert gl.from_greeklish("il dichiarante ha fatto renonce") is None
    assert gl.from_greeklish("renons") is None
    assert gl.from_greeklish("ο εκτελεστής έκανε renons akoma") is None


def test_greeklish_questions_find_greek_concepts(g):
    greek = g.for_questions.from_greeklish("o dytikos ekane renons, eixe akoma koupa sto xeri tou")
    assert greek is not None and "revoke" in g.for_questions.concept_ids(greek)


def test_a_concept_of_both_phases_hints_at_the_storys_phase(g):
    """A slip of the tongue is Law 25A in the auction and 45C4b in the play: the rest of the story decides."""
    q = g.for_questions
    auction = q.law_hints("in the auction partner bid two hearts, then a slip of the tongue: he meant two spades")
    play = q.law_hints("at trick 5 declarer called the jack from dummy, a slip of the tongue: he meant the king")
    assert "25A" in auction and "45C4b" not in auction
    assert "45C4b" in play and "25A" not in play
    said_alone = q.law_hints("a slip of the tongue")
    assert {"25A", "45C4b"} <= set(said_alone)
    q.use_phases = False
    try:
        assert "45C4b" in q.law_hints("in the auction partner bid two hearts, then a slip of the tongue")
    finally:
        q.use_phases = True
