"""A question's table record (hands, auction, board header) is set aside; its situation is kept word for word."""

from __future__ import annotations

import pytest

from kb.record import situation

ASK = "Dummy played a card that declarer had not named. Must it stay played?"


@pytest.mark.parametrize("record, pieces", [
    ("Board 14, dealer East, N/S vulnerable, teams.\n"
     "North: ♠ A K 5 3 ♥ Q 10 2 ♦ J 8 4 ♣ K 7 6\n"
     "Auction: 1♣ – 1♥ – X – 2♥ – 3♣ – P – 3NT – all pass.",
     ["Board 14", "dealer East", "N/S vulnerable", "North: ♠ A K 5 3 ♥ Q 10 2 ♦ J 8 4 ♣ K 7 6",
      "Auction: 1♣ – 1♥ – X – 2♥ – 3♣ – P – 3NT – all pass", "teams"]),
    ("Bd 22  Dlr: E  Vul: E/W\nS AK53 H Q102 D J84 C K76\nBidding: 1S P 2H X 2S P 4S AP",
     ["Bd 22", "Dlr: E", "Vul: E/W", "S AK53 H Q102 D J84 C K76", "Bidding: 1S P 2H X 2S P 4S AP"]),
    ("W N E S\n1♦ 1♠ 2♥ 2♠\n3♥ P P 3♠\nall pass", ["W N E S", "1♦ 1♠ 2♥ 2♠ 3♥ P P 3♠ all pass"]),
    ("Smazzata 7, dich. Sud, tutti in zona.\nLicita: 1♥ passo 2♣ contro passo 3♣ fine.",
     ["Smazzata 7", "dich. Sud", "tutti in zona", "Licita: 1♥ passo 2♣ contro passo 3♣ fine"]),
    ("Board 5, μοιράζει ο Βορράς, όλοι στη ζώνη.\nΑγορά: 1♠ πας 2♦ πας 4♠ πας πας πας",
     ["Board 5", "μοιράζει ο Βορράς", "όλοι στη ζώνη", "Αγορά: 1♠ πας 2♦ πας 4♠ πας πας πας"]),
    # stacked and two-column diagrams: one suit a line
    ("Dlr: N   Vul: None\n♠ QJ9\n♥ AK42\n♦ —\n♣ J10532\n\n♠ 8 6 5 4     ♠ A K 7\n♥ 10 3        ♥ Q J 9 8",
     ["Dlr: N", "Vul: None", "♠ QJ9", "♥ AK42", "♦ —", "♣ J10532", "♠ 8 6 5 4 ♠ A K 7", "♥ 10 3 ♥ Q J 9 8"]),
    ("My hand: ♡KJ4 ♥A853 ♦Q2 ♣K1065. Bidding went 1NT (2♥) X (P) 3NT all pass.",
     ["My hand: ♥KJ4 ♥A853 ♦Q2 ♣K1065", "1NT (2♥) X (P) 3NT all pass", "Bidding went"]),
])
@pytest.mark.parametrize("before", [True, False])
def test_a_record_before_or_after_the_question_is_set_aside(record, pieces, before):
    s = situation(f"{record}\n\n{ASK}" if before else f"{ASK}\n{record}")
    assert s.text == ASK
    assert sorted(s.record) == sorted(pieces)


@pytest.mark.parametrize("record", [
    "https://www.bridgebase.com/tools/handviewer.html?lin=pn|a,b,c,d|md|3SAKQ2HK3DQ86CA953,S10HAJ954|sv|o|mb|1H|",
    '[Board "7"]\n[Dealer "S"]\n[Vulnerable "None"]\n[Deal "N:AK53.Q102.J84.K76 Q9.AJ87.K1093.Q52 T872.65.AQ7.JT94 -"]',
    "N:AK53.Q102.J84.K76 Q9.AJ87.K1093.Q52 T872.65.AQ7.JT94 J64.K943.652.A83",
    "md|3SAKQ2HK3DQ86CA953,S10HAJ954DK432CJ8,|sv|o|",
])
def test_machine_formats_of_a_deal_are_record(record):
    s = situation(f"{record}\n{ASK}")
    assert s.text == ASK and s.record


@pytest.mark.parametrize("question", [
    "version 1.2.3.4 of the scoring program gave 3.5 IMPs; is the score right?",
    "Attacco a quadri, il morto ha ♦K 8 3, il dichiarante dice 'piccola' e il morto mette il 3.",
    "dummy has ♦A 10 6, declarer says 'top' and dummy puts the ace on",
    "Il mazziere era Est; Nord ha detto 1♣ prima di lui e Sud ha passato.",
    "Dealer South, but West passed before South had called.",
    "Contract 4♠ by South, lead ♦K. Declarer played ♠A, then ♥K from dummy.",
    "South opened 1♥ out of turn and West passed; North bid 2♣.",
    "Ο εκτελεστής έπαιξε τον ♠Ρ από τον μορ· ποιο φύλλο παίζεται;",
    "Law 45C4b: declarer named the ♥Q, then said 'no, the king'.",
])
def test_the_situation_keeps_what_a_sentence_says_about_cards_calls_and_seats(question):
    s = situation(question)
    assert s.text == question and s.record == []


def test_a_record_inside_a_question_keeps_the_lines_around_it_word_for_word():
    q = ("Ο μορ έπαιξε φύλλο που δεν ονόμασε ο εκτελεστής;\n"
         "Board 3, Teiler Süd, alle in Gefahr.\n"
         "Reizung: 1♥ – 1♠ – 2♥ – 2♠ – 3♥ – passe – passe – passe\n"
         "Dopo l'attacco , il morto scopre le carte.")
    s = situation(q)
    assert s.text == "Ο μορ έπαιξε φύλλο που δεν ονόμασε ο εκτελεστής;\nDopo l'attacco , il morto scopre le carte."
    assert len(s.record) == 4


def test_a_question_that_is_only_a_record_is_read_whole():
    q = "W N E S\n1♦ 1♠ 2♥ 2♠\n3♥ P P 3♠\nall pass"
    assert situation(q).text == q and situation(q).record == []
    assert situation("").text == ""


@pytest.mark.parametrize("framing", [
    "Club duplicate last Tuesday, 24 tables, I was the TD.",
    "Ero l'arbitro di un simultaneo a coppie, 14 tavoli.",
    "Σε ένα τουρνουά ζευγαριών ήμουν ο διαιτητής.",
    "The director was called.",
    "Ich war als Spieler dabei, Paarturnier an 9 Tischen.",
    "Escribo como jugador, torneo por equipos del sábado.",
])
def test_sentences_that_only_say_who_and_where_are_framing(framing):
    for q in (f"{framing} {ASK}", f"{ASK}\n{framing}"):
        s = situation(q)
        assert s.text == ASK and s.framing == [framing] and s.record == []


@pytest.mark.parametrize("question", [
    "Was the TD right? We disagree.",  # a question stays, even about the director
    "The director was called at the end of the hand, after the revoke was established.",  # more than setting
    "Thanks in advance. Dummy played a card that declarer had not named.",  # no concept: may carry meaning
    "I was the TD.",  # nothing else to read
    "Ο Διαιτητής κλήθηκε; Ο μορ έπαιξε φύλλο.",  # the Greek question mark
])
def test_framing_keeps_questions_substance_and_the_only_sentence(question):
    s = situation(question)
    assert s.text == question and s.framing == []


def test_record_and_framing_can_each_be_kept():
    q = "Board 3, dealer South, N/S vulnerable.\nClub pairs, I was the TD.\n" + ASK
    assert situation(q).text == ASK
    assert situation(q, framing=False).text == "Club pairs, I was the TD.\n" + ASK
    assert situation(q, record=False).text.startswith("Board 3")
