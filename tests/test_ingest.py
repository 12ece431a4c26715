"""Segment and tag: on small fixtures in each language's style, and on the default corpus."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ingest.catalog import CatalogEntry, load_catalog
from ingest.model import Line, Passage, RawDocument
from ingest.pipeline import document_passages, process_corpus, process_file
from ingest.segment import segment, split_question_answer
from ingest.tag import classify_refs, complete_quotes, explicit_tags, infer_tags

ROOT = Path(__file__).resolve().parents[1]


def _doc(text: str, name: str = "t.txt") -> RawDocument:
    lines = [Line(t, 1) for t in text.split("\n")]
    return RawDocument(path=name, name=name, sha256="x", lines=lines, pages=1)


ITALIAN_LAW = """ART.30 - PASSO FUORI TURNO
Quando un giocatore è passato fuori turno:
A. Prima che qualsiasi giocatore abbia dichiarato
Il colpevole deve passare al suo primo turno licitativo, si può applicare l'art.72/B1.
B. Dopo che qualsiasi giocatore abbia dichiarato
1.AL TURNO DI CHIAMATA DELL'AVVERSARIO DI DESTRA
Il colpevole deve passare al suo primo turno di chiamata.
2.AL TURNO DI CHIAMATA DEL COMPAGNO
a) dovere del colpevole
Il colpevole deve sempre passare.
b) opzioni del compagno del colpevole
Il compagno può fare qualsiasi dichiarazione sufficiente.
3.AL TURNO DI CHIAMATA DELL'AVVERSARIO DI SINISTRA
Viene trattato come un cambio di chiamata e si applica l'art.25.
C. Quando il passo è convenzionale
Si applicherà l'art.31 e non questo."""


def test_italian_law_text_split_at_its_numbering():
    ps, _ = document_passages(_doc(ITALIAN_LAW), CatalogEntry(file="t.txt", languages=["it"]))
    laws = [p.laws[0] for p in ps if p.kind == "law_text"]
    assert laws == ["30", "30A", "30B", "30B1", "30B2", "30B2a", "30B2b", "30B3", "30C"]
    by = {p.laws[0]: p for p in ps}
    assert by["30A"].cites == ["72B1"] and by["30B3"].cites == ["25"]
    assert all(p.lang == "it" for p in ps)
    assert by["30B2a"].title.startswith("ART 30 – PASSO FUORI TURNO · 30B2a")


ENGLISH_QUOTE = """LAW 45 CARD PLAYED
1
South is playing 2♠. Declarer calls "Jack" from dummy, immediately followed by "oops, the King!".
Does the TD allow him to play the K instead of the J ?
NO! 45C4a; we do not use 45C4b.
LAW 45 - CARD PLAYED
[. . .]
C. Compulsory Play of Card
[. . .]
2. Declarer must play a card from his hand if it is
- (a) held face up, touching or nearly touching the table; or
- (b) maintained in such a position as to indicate that it has been played.
[. . .]
4. (a) A card must be played if a player names or otherwise designates it as the card he proposes to play.
(b) Until his partner has played a card a player may change an unintended designation (see Laws 47D and 16D1).
The TD then rules that the card named stands.
2
South wins in dummy with the A and says "Club", immediately corrected by "oh, no, Diamond!".
What should the TD do?
The change is allowed (Law **45C4b**); Law 16D may apply to South."""


def test_english_quoted_law_text_and_examples():
    ps, rep = document_passages(_doc(ENGLISH_QUOTE), CatalogEntry(file="t.txt", languages=["en"]))
    law = {p.laws[0]: p for p in ps if p.kind == "law_text"}
    assert set(law) == {"45C", "45C2", "45C4a", "45C4b"}
    assert "(b) maintained" in law["45C2"].text, "lead-in sentence keeps its short (a)/(b) items"
    assert law["45C4b"].cites == ["47D", "16D1"]
    ex = [p for p in ps if p.kind == "example"]
    assert [p.example_no for p in ex] == ["1", "2"]
    assert "card named stands" in ex[0].text, "example 1 resumes after the quoted law text"
    assert "Declarer must play" not in ex[0].text
    assert ex[0].laws == ["45C4a"] and ex[0].cites == ["45C4b"]
    assert ex[0].question.startswith("South is playing") and ex[0].answer.startswith("NO!")
    assert ex[1].laws == ["45C4b"] and "16D" in ex[1].cites
    assert rep.examples == 2


ANSWER_AFTER_QUOTE = """LAW 45 CARD PLAYED
1
A defender shows a card and puts it back; then declarer drops one. TD!
- a) The defender's card is played: Law 45C1. Law 49 applies too.
LAW 49 - EXPOSURE OF A DEFENDER'S CARDS
Except in the normal course of play, a defender's card whose face his partner could see is a penalty card.
- b) According to Law 45C2 this is not a played card."""


def test_answer_item_after_a_quoted_law_returns_to_the_example():
    ps, _ = document_passages(_doc(ANSWER_AFTER_QUOTE), CatalogEntry(file="t.txt", languages=["en"]))
    law49 = next(p for p in ps if p.kind == "law_text" and p.laws == ["49"])
    assert "According to" not in law49.text
    ex = next(p for p in ps if p.kind == "example")
    assert "b) According to Law 45C2" in ex.text


def _law(laws: list[str], text: str, lang: str = "en", title: str = "LAW 46 – CALL FROM DUMMY") -> Passage:
    return Passage(id=text[:8], doc="d", page=1, page_end=None, lang=lang, kind="law_text",
                   title=f"{title} · {laws[0]}", text=text, laws=laws)


PARAGRAPH = "If declarer calls a card that is not in dummy the call is void and declarer may designate any legal card."


def test_elided_quote_takes_the_address_its_words_have_elsewhere():
    full = _law(["46B4"], f"4. {PARAGRAPH}")
    quote = _law(["46"], f"LAW 46 – CALL FROM DUMMY\n[. . .]\n4. {PARAGRAPH}")
    assert complete_quotes([quote, full]) == 1
    assert quote.laws == ["46B4"] and quote.title.endswith("· 46B4")
    assert complete_quotes([quote, full]) == 0, "idempotent"


def test_elided_quote_left_alone_without_a_clear_match():
    other_lang = _law(["46B4"], f"4. {PARAGRAPH}", lang="it")
    other_law = _law(["47B"], f"4. {PARAGRAPH}")
    different = _law(["46B3"], "If declarer designates a rank but not a suit he is deemed to have called that rank.")
    quote = _law(["46"], f"4. {PARAGRAPH}")
    assert complete_quotes([quote, other_lang, other_law, different]) == 0
    assert quote.laws == ["46"]
    # two deeper matches that disagree: their common ancestor, when deeper than the quote
    a, b = _law(["46B4"], PARAGRAPH), _law(["46B5"], PARAGRAPH)
    assert complete_quotes([quote, a, b]) == 1 and quote.laws == ["46B"]


def test_classify_refs_negation_and_pointers():
    applied, cited = classify_refs("No **45E2**. He led out of turn (art. 55A); see Law 16C. We do not use 45C4b.")
    assert applied == ["45E2", "55A"] and cited == ["16C", "45C4b"]
    # a parenthesis between the negation and the reference: the law stated the negative sentence
    applied, cited = classify_refs("Average plus to the pair not at fault (Law 12C2). This is not Law 12C1.")
    assert applied == ["12C2"] and cited == ["12C1"]


def test_example_without_refs_takes_quoted_emphasised_rule():
    laws, _ = explicit_tags("example", "The intention was not incontrovertible.", None, "46",
                            quoted=[("46B", False), ("46B2", True)])
    assert laws[0] == "46B2"


def test_commentary_outside_document_scope_is_cited():
    laws, cites = explicit_tags("commentary", "The conditions are comparable with those in Law 25A.", None, None,
                                scope=["45", "46", "47"])
    assert laws == [] and cites == ["25A"]


def test_question_answer_split():
    q, a = split_question_answer(["1", "Sud gioca 3SA.", "L'arbitro autorizza il cambio?", "NO (L45c4a)"])
    assert q.replace("\n", " ") == "Sud gioca 3SA. L'arbitro autorizza il cambio?" and a == "NO (L45c4a)"
    q, a = split_question_answer(["Est gioca il K.", "Risposta", "Si applica il 45E."])
    assert q == "Est gioca il K." and a == "Si applica il 45E."


def test_greek_law_numbering():
    text = "ΝΟΜΟΣ 45 - ΠΑΙΓΜΕΝΟ ΦΥΛΛΟ\nΓ. Υποχρεωτικό παίξιμο φύλλου\n1. Φύλλο αμυνόμενου που κρατιέται έτσι ώστε ο συμπαίκτης του να μπορεί να δει την όψη του πρέπει να παιχτεί."
    blocks = segment([Line(t, 1) for t in text.split("\n")])
    assert [b.address for b in blocks if b.kind == "law_text"][-1] == "45C1"


# ---------------------------------------------------------------- the default corpus

def _corpus():
    catalog, problems = load_catalog(ROOT / "corpus")
    assert not problems
    return {r.path: (ps, r) for _, ps, r, _ in process_corpus(ROOT / "corpus", catalog)}


@pytest.fixture(scope="module")
def corpus():
    return _corpus()


def test_every_worked_example_of_both_lessons(corpus):
    # Counted by hand. Italian lesson: Art. 45 → 8 numbered cases, Art. 46 → 4, Art. 47 → 47A, 47B, 47D (two
    # deals), 47E2 (ES:) = 5; 17 in all. English workshop: Law 45 → 10 (the 10th is the brief summary),
    # Law 46 → 4, Law 47 → 47A, 47B, 47D (deal, under the 47C heading), 47E2a (Example:), 47E2b (A further
    # example) = 5; 19 in all.
    it_ps, it = corpus["it_scuola-arbitrale_art45-47_2007.txt"]
    en_ps, en = corpus["en_ebl-tds-workshop_law45-47_2011.pdf"]
    assert it.examples == 17
    assert en.examples == 19
    numbered = lambda ps, law: sorted({int(p.example_no) for p in ps  # noqa: E731
                                       if p.kind == "example" and p.heading == law and p.example_no.isdigit()})
    assert numbered(it_ps, "45") == list(range(1, 9)) and numbered(it_ps, "46") == [1, 2, 3, 4]
    assert numbered(en_ps, "45") == list(range(1, 11)) and numbered(en_ps, "46") == [1, 2, 3, 4]


def test_corpus_examples_have_deals_and_tags(corpus):
    en_ps, _ = corpus["en_ebl-tds-workshop_law45-47_2011.pdf"]
    first = next(p for p in en_ps if p.kind == "example" and p.heading == "45" and p.example_no == "1")
    assert first.laws == ["45C4a"] and first.cites == ["45C4b"]
    assert first.deal is not None and first.deal.north.spades == "KJ852" and first.deal.contract == "2S"
    assert first.page == 1 and first.page_end == 2


def test_corpus_law_texts(corpus):
    ps, _ = corpus["it_errori-frequenti_art30-64.txt"]
    laws = [p.laws[0] for p in ps if p.kind == "law_text"]
    for want in ["30A", "30B1", "30B2a", "30B2b", "30B3", "30C", "64A1", "64B5", "50D2a", "63A2"]:
        assert want in laws
    assert all(p.lang == "it" for p in ps)


def test_mixed_language_pdf_labelled_per_passage(corpus):
    ps, rep = corpus["el-en_commentary_law45-47.pdf"]
    assert rep.by_lang.get("el", 0) >= 5 and rep.by_lang.get("en", 0) >= 5
    assert not any("Σχόλια στους Νόμους" in p.text for p in ps), "running header removed"
    f = next(p for p in ps if "45F" in p.laws)
    assert f.kind == "commentary"


BILINGUAL = """Σχόλια στους Νόμους 45-47
Ένα φύλλο ενός αμυνόμενου θεωρείται παιγμένο όταν είναι δυνατόν να το έχει δει ο συμπαίκτης του.
Ο Διαιτητής οφείλει να εξηγήσει με προσοχή στον ΑΣΔ ότι αν δεν αλλάξει το φύλλο του, ούτε ο εκτελεστής θα αλλάξει.
A card from a defender is deemed to be played when it is possible that his partner has seen it.
The TD should carefully explain to RHO that if he does not change his card, neither will declarer."""


def test_commentary_parts_end_where_the_language_changes():
    # 60 words: one part by size; two by language (the English twin no longer rides on the Greek passage)
    ps, _ = document_passages(_doc(BILINGUAL, "c.txt"), CatalogEntry(file="c.txt", title="Commentary on Laws 45-47"))
    assert [p.lang for p in ps] == ["el", "en"]
    assert "συμπαίκτης" in ps[0].text and "partner" not in ps[0].text
    assert ps[1].text.startswith("A card from a defender")


def test_a_short_heading_in_another_language_does_not_split_a_commentary():
    text = ("### 19 C – Contro o surcontro superati\n"
            "Ogni contro o surcontro è superato da una successiva offerta legale fatta da qualsiasi giocatore.")
    ps, _ = document_passages(_doc(text, "h.md"), CatalogEntry(file="h.md", title="Appunti"))
    assert len([p for p in ps if "surcontro è superato" in p.text]) == 1
    assert all(p.lang == "it" for p in ps)


def test_ids_stable_across_runs():
    a = _corpus()
    b = _corpus()
    for name in a:
        assert [p.id for p in a[name][0]] == [p.id for p in b[name][0]]


def test_unreadable_file_reported_not_raised(tmp_path):
    f = tmp_path / "broken.pdf"
    f.write_bytes(b"%PDF-1.7\n garbage")
    ps, rep, _ = process_file(f, tmp_path)
    assert ps == [] and rep.status == "failed" and rep.message


# A lesson as many directors write one: title-case law headings, "Example N" lines, "Ruling:" answers.
NAMED_EXAMPLES_EN = """Law 27 - Insufficient Bid

Under Law 27B1(b) the insufficient bid may be replaced by a comparable call without further rectification.

Example 4
North opens 1NT and East overcalls 2♥. South, who missed the overcall, bids 2♣.

Ruling: West does not accept it. A double showing four spades is comparable (Law 27B1(b)), so the auction goes on.

Example 5
East opens 1♠; South bids 1♥. The director is called.

Ruling: 2♥ is the lowest sufficient bid in the same denomination: Law 27B1(a) applies.

Law 67 - Defective Trick

Example 6
At trick 4 East did not play; West has already led to trick 5.

Ruling: Law 67A1 applies: East supplies a card to trick 4."""

NAMED_EXAMPLES_IT = """Art. 73 - Comunicazione

Art. 73 E 1: è lecito ingannare con una chiamata o una giocata.

Esempio 2
Nord esita a lungo con un singolo e poi passa; Est sbaglia il controgioco.

Decisione: nessuna ragione bridgistica dimostrabile: si applicano l'Art. 73 E 2 e 73 F."""


def test_named_examples_under_title_case_headings():
    ps, _ = document_passages(_doc(NAMED_EXAMPLES_EN), CatalogEntry(file="t.txt", languages=["en"]))
    ex = [p for p in ps if p.kind == "example"]
    assert [p.example_no for p in ex] == ["4", "5", "6"]
    assert ex[0].laws[0] == "27B1b" and ex[1].laws == ["27B1a"] and ex[2].laws == ["67A1"]
    assert ex[0].question.startswith("North opens 1NT") and ex[0].answer.startswith("West does not accept")
    assert "Example 4" in ex[0].title or "example 4" in ex[0].title
    assert not any("Ruling" in p.text for p in ps if p.kind != "example")  # each ruling stays with its case

    ps, _ = document_passages(_doc(NAMED_EXAMPLES_IT), CatalogEntry(file="t.txt", languages=["it"]))
    ex = [p for p in ps if p.kind == "example"]
    assert len(ex) == 1 and ex[0].laws == ["73E2", "73F"] and ex[0].answer.startswith("nessuna ragione")
    assert any(p.laws == ["73E1"] for p in ps)  # "Art. 73 E 1", not Laws 73 and 1


# A casebook with no law headings at all: its cases are announced by name, their laws stand in the rulings.
CASEBOOK = """Appeals Casebook 2019

Case 1
Declarer called for the jack from dummy and at once said "no, the king".

Ruling: The change is allowed only for an inadvertent designation (Law 45C4b); here it was a change of mind.

Case 2
Declarer said "ruff" and dummy held two trumps.

Ruling: Law 46B2 applies: the lowest trump is played.

Claims at the end of the session
A claim is a statement that a player's side will win a number of tricks; the director rules on a contested
claim as equitably as possible to both sides."""


def test_casebook_cases_without_law_headings():
    ps, _ = document_passages(_doc(CASEBOOK), CatalogEntry(file="t.txt", languages=["en"]))
    ex = [p for p in ps if p.kind == "example"]
    assert [p.example_no for p in ex] == ["1", "2"]
    assert ex[0].laws[0] == "45C4b" and ex[1].laws == ["46B2"]
    assert ex[1].answer.startswith("Law 46B2 applies") and "claim" not in ex[1].text.lower()
    assert any(p.kind == "commentary" and "contested" in p.text for p in ps)  # the section after the last case


# Handouts that name each section at the start of its paragraph and start each case on its example's line.
HANDOUT_EN = """DIRECTOR COURSE: THE PLAY PERIOD

LAW 44 – SEQUENCE AND PROCEDURE OF PLAY

Law 44A – Lead to a trick. The leader may lead any card, unless his side is under a restriction.

Law 44C – Requirement to follow suit. A player must follow suit if he can; this overrides every other duty.

Example 1. West has a major penalty card, the ♠K. Declarer leads a heart and West still holds hearts.
Ruling: West must follow suit with a heart; the penalty card stays on the table (Law 44C).

Example 2: South plays 3NT. East wins the trick with the ♦A and leads a spade from his hand at once.
Ruling: The winner of the trick leads to the next one (Law 44G)."""

HANDOUT_IT = """ART. 13 – NUMERO ERRATO DI CARTE

Art. 13 A – Intervento dell'Arbitro. L'Arbitro ricompone le mani e, se nessuno ha dichiarato, il board si gioca.

Esempio 1. Board 5, Est conta quattordici carte prima della licita e chiama l'Arbitro.
Decisione: si corregge la mano e il board si gioca normalmente (art. 13 A)."""

HANDOUT_EL = """ΝΟΜΟΣ 38 – ΑΓΟΡΑ ΠΑΝΩ ΑΠΟ ΕΠΤΑ

Νόμος 38Α. Συμβόλαιο πάνω από επτά δεν παίζεται ποτέ.

Νόμος 38Γ. Και οι δύο παίκτες της παραβαίνουσας πλευράς περνούν πάσο για την υπόλοιπη αγορά.

Παράδειγμα 1. Ο Βορράς αγοράζει 8♠ και ο Διαιτητής καλείται αμέσως στο τραπέζι.
Απόφαση: η αγορά ακυρώνεται και ο Νότος λέει πάσο για την υπόλοιπη αγορά (Νόμος 38Γ)."""


def test_handout_sections_and_examples_on_their_own_lines():
    for text, lang, sections, examples in [
        (HANDOUT_EN, "en", ["44A", "44C"], [["44C"], ["44G"]]),
        (HANDOUT_IT, "it", ["13A"], [["13A"]]),
        (HANDOUT_EL, "el", ["38A", "38C"], [["38C"]]),
    ]:
        ps, _ = document_passages(_doc(text), CatalogEntry(file="t.txt", languages=[lang]))
        assert [p.laws for p in ps if p.kind == "law_text"] == [[s] for s in sections], lang
        ex = [p for p in ps if p.kind == "example"]
        assert [p.laws for p in ex] == examples, lang
        assert [p.example_no for p in ex] == [str(i + 1) for i in range(len(examples))], lang
        assert all(p.question and p.answer for p in ex), lang
        assert not any(p.kind == "law_text" and ("Ruling" in p.text or "Decisione" in p.text or "Απόφαση" in p.text)
                       for p in ps), lang


def test_a_ruling_citing_a_section_stays_in_its_example():
    text = "LAW 45 – CARD PLAYED\n\n1\nSouth leads the ♥3 from dummy's side.\nLaw 45E2. The ♥3 is a lead out of turn."
    ps, _ = document_passages(_doc(text), CatalogEntry(file="t.txt", languages=["en"]))
    assert [p.kind for p in ps] == ["example"] and "lead out of turn" in ps[0].text


# Three more shapes of a user's document: a Markdown handout, a questions-and-answers page, an appeals bulletin.
MARKDOWN_IT = """# Il periodo della licita

## Art. 19 – Contro e surcontro

### 19 A – Contro
Si può contrare soltanto l'ultima offerta fatta da un avversario.

### 19 B – Surcontro
Si può surcontrare soltanto l'ultimo contro fatto da un avversario.

**Caso 1**
Nord apre 1♥, Sud contra l'offerta del compagno prima che Est abbia dichiarato.
*Soluzione:* il contro non è ammesso: si contra soltanto un'offerta avversaria (art. 19 A)."""

FAQ_EN = """Questions directors ask

Adjusted scores

Q: North hesitated before passing and South then bid game. Can I give an adjusted score?
A: Yes, when the hesitation suggested the bid over a logical alternative and the opponents were damaged (Law 12C1).

Q: A board could not be played because the time ran out. What do I give?
A: An artificial adjusted score: average plus to the blameless pair (Law 12C2).

Disputed facts

Q: Declarer says he called the queen, the defenders heard the king. Who decides?
A: The director decides on the balance of probabilities (Law 85A1)."""

APPEALS_EL = """Δελτίο της Επιτροπής Εφέσεων

Έφεση αρ. 1
Αγώνας: Swiss ομάδων
Γεγονότα: Ο πίνακας δεν παίχτηκε στο ένα τραπέζι λόγω λάθους του διαιτητή.
Απόφαση διαιτητή: Τεχνητό αποτέλεσμα.
Απόφαση επιτροπής: Επικυρώνεται η απόφαση (Νόμος 86Α).

Έφεση αρ. 2
Αγώνας: Κύπελλο
Γεγονότα: Η ομάδα ζήτησε έφεση μία ώρα μετά την ανακοίνωση των αποτελεσμάτων.
Απόφαση επιτροπής: Η έφεση είναι εκπρόθεσμη (Νόμος 92Β)."""


def test_markdown_handout_faq_and_appeals_bulletin():
    ps, _ = document_passages(_doc(MARKDOWN_IT, "t.md"), CatalogEntry(file="t.md", languages=["it"]))
    assert [p.laws for p in ps if p.kind != "example" and p.laws and p.laws[0] in ("19A", "19B")] == [["19A"], ["19B"]]
    ex = [p for p in ps if p.kind == "example"]
    assert len(ex) == 1 and ex[0].laws == ["19A"] and ex[0].answer.startswith("il contro non è ammesso")
    assert not any(p.text.strip().endswith("Contro e surcontro") for p in ps)  # no passage that is only a heading

    ps, _ = document_passages(_doc(FAQ_EN), CatalogEntry(file="t.txt", languages=["en"]))
    ex = [p for p in ps if p.kind == "example"]
    assert [p.laws for p in ex] == [["12C1"], ["12C2"], ["85A1"]]
    assert ex[0].question.startswith("North hesitated") and ex[0].answer.startswith("Yes, when")
    assert ex[2].title.startswith("Disputed facts") and not any(p.text.strip() == "Disputed facts" for p in ps)

    ps, _ = document_passages(_doc(APPEALS_EL), CatalogEntry(file="t.txt", languages=["el"]))
    ex = [p for p in ps if p.kind == "example"]
    assert [p.example_no for p in ex] == ["1", "2"] and [p.laws for p in ex] == [["86A"], ["92B"]]
    assert ex[0].answer.startswith("Τεχνητό αποτέλεσμα") and "Γεγονότα" in ex[0].question


def _untagged(text: str, doc: str = "new.txt") -> Passage:
    return Passage(id=text[:8], doc=doc, page=1, page_end=None, lang="en", kind="commentary", title="t", text=text)


def test_infer_tags_from_the_passages_own_words_then_neighbours():
    from kb.glossary import default_glossary

    tagged = [Passage(id=f"t{i}", doc="old.txt", page=1, page_end=None, lang="en", kind="law_text", title="t",
                      text="a card is played when", laws=["45C1"]) for i in range(3)]
    claim = _untagged("Declarer claimed the rest of the tricks; a defender contested the claim.")
    plain_words = _untagged("the weather was nice and the coffee hot")
    passages = [*tagged, claim, plain_words]
    vectors = np.ones((len(passages), 4), np.float32) / 2  # every neighbour is the same: only 45C1 to borrow
    infer_tags(passages, vectors, concept_votes=default_glossary().law_votes)
    assert max(claim.inferred, key=claim.inferred.get) == "70"  # its words name the claim laws nobody is tagged with
    assert plain_words.inferred == {"45C1": 1.0}  # nothing named: the neighbours decide
    infer_tags(passages, vectors)  # without the glossary, the neighbours only
    assert claim.inferred == {"45C1": 1.0}


def test_infer_tags_keeps_a_declared_scope():
    from kb.glossary import default_glossary

    tagged = [Passage(id="t", doc="old.txt", page=1, page_end=None, lang="en", kind="law_text", title="t", text="x", laws=["45C1"])]
    aside = _untagged("Declarer claimed the rest of the tricks; a defender contested the claim.", doc="c.txt")
    passages = [*tagged, aside]
    vectors = np.ones((2, 4), np.float32) / 2
    infer_tags(passages, vectors, scopes={"c.txt": ["45", "46", "47"]}, concept_votes=default_glossary().law_votes)
    assert aside.inferred == {"45C1": 1.0}  # a commentary on Laws 45-47 mentioning claims stays in its scope


def _unit(*xs: float) -> np.ndarray:
    v = np.array(xs, np.float32)
    return v / np.linalg.norm(v)


def test_translation_twins_are_mutual_closest_across_languages_of_one_document():
    from ingest.tag import translation_twins

    def p(text: str, lang: str, doc: str = "bi.pdf") -> Passage:
        return Passage(id=text, doc=doc, page=1, page_end=None, lang=lang, kind="commentary", title="t", text=text)

    passages = [p("el1", "el"), p("el2", "el"), p("en1", "en"), p("en2", "en"), p("alone", "en", "other.pdf")]
    vectors = np.stack([_unit(1, 0.1, 0), _unit(0.1, 1, 0), _unit(1, 0.2, 0.1), _unit(0.2, 1, 0.1), _unit(1, 0.1, 0)])
    assert translation_twins(passages, vectors) == {0: 2, 2: 0, 1: 3, 3: 1}  # never across documents
    vectors[3] = vectors[2]  # two English paragraphs equally close to el1: no twin is certain
    assert 0 not in translation_twins(passages, vectors)


def test_an_untagged_passage_takes_its_translations_law_evidence():
    from kb.glossary import default_glossary

    tagged = Passage(id="g", doc="bi.pdf", page=1, page_end=None, lang="el", kind="commentary", title="t",
                     text="Ο Νόμος 45Γ1 ορίζει πότε θεωρείται παιγμένο.", laws=["45C1"])
    twin = _untagged("The criteria for a card to be deemed played are quite different.", doc="bi.pdf")
    stranger = _untagged("The criteria for a card to be deemed played are quite different.", doc="other.pdf")
    passages = [tagged, twin, stranger]
    vectors = np.stack([_unit(1, 0.1), _unit(1, 0.15), _unit(0.2, 1)])
    infer_tags(passages, vectors, concept_votes=default_glossary().law_votes)
    assert max(twin.inferred, key=twin.inferred.get) == "45C1"
    assert "45C1" not in stranger.inferred or stranger.inferred["45C1"] < twin.inferred["45C1"]
