"""Deal diagrams: every layout the corpus uses, read from small copies of the real lines."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingest.deal import DealSpan, _find, deal_context, find_deals, parse_deal
from ingest.model import SEATS, SUITS, Deal, Hand

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


def lines(text: str) -> list[str]:
    return text.split("\n")


def hands(deal: Deal) -> dict[str, tuple[str, str, str, str] | None]:
    out = {}
    for seat in SEATS:
        h = getattr(deal, seat)
        out[seat] = None if h is None else (h.spades, h.hearts, h.diamonds, h.clubs)
    return out


def assert_consistent(deal: Deal) -> None:
    """No hand over 13 cards, no card in two hands, only real ranks."""
    seen = set()
    for seat in SEATS:
        h = getattr(deal, seat)
        if h is None:
            continue
        assert 0 < h.cards() <= 13
        for i, suit in enumerate(SUITS):
            ranks = getattr(h, suit)
            assert set(ranks) <= set("AKQJT98765432x")
            for r in ranks:
                if r != "x":
                    assert (i, r) not in seen
                    seen.add((i, r))


# --- the deal of ART. 45 / 1 (Italian) and LAW 45 / 1 (English): the same cards, two layouts -----

DEAL_45_1 = {
    "north": ("KJ852", "QT864", "Q", "32"),
    "west": ("93", "KJ72", "8762", "K96"),
    "east": ("A764", "A93", "KJ5", "JT4"),
    "south": ("QT", "5", "AT943", "AQ875"),
}

IT_STACKED = """E/--

♠KJ852
♥QT864
♦Q
♣32

♠93
♥KJ72
♦8762
♣K96

♠A764
♥A93
♦KJ5
♣JT4

♠QT
♥5
♦AT943
♣AQ875

Sud è dichiarante a 2 picche. Riceve l'attacco a quadri per la donna, re e asso."""

EN_GRID_SPACES = "\n".join([
    "1",
    "E/--",
    "    ♠ KJ852    ",
    "    ♥ QT864    ",
    "    ♦ Q    ",
    "    ♣ 32    ",
    "♠ 93        ♠ A764",
    "♥ KJ72        ♥ A93",
    "♦ 8762        ♦ KJ5",
    "♣ K96        ♣ JT4",
    "    ♠ QT    ",
    "    ♥ 5    ",
    "    ♦ AT943    ",
    "    ♣ AQ875    ",
    "South is playing 2♠.",
])


def test_stacked_italian_hands_are_north_west_east_south():
    ls = lines(IT_STACKED)
    spans = find_deals(ls)
    assert len(spans) == 1
    sp = spans[0]
    assert (sp.start, sp.end) == (2, 21)
    assert ls[sp.start] == "♠KJ852" and ls[sp.end - 1] == "♣AQ875"
    assert hands(sp.deal) == DEAL_45_1
    for seat in SEATS:
        assert getattr(sp.deal, seat).cards() == 13
    assert_consistent(sp.deal)


def test_english_space_grid_is_the_same_deal_as_the_italian_stacked_one():
    ls = lines(EN_GRID_SPACES)
    spans = find_deals(ls)
    assert [(s.start, s.end) for s in spans] == [(2, 14)]
    assert hands(spans[0].deal) == DEAL_45_1
    # the stacked order N, W, E, S is proved by the grid: same cards, same seats
    assert hands(parse_deal(lines(IT_STACKED))) == hands(parse_deal(ls))


def test_stacked_hands_with_compass_letters_between_them_board_9():
    text = """BOARD 9

Dich. N. Vuln: EO

DICHIARAZIONE

O\tN\tE\tS
\tp\tp\t1SA
p\t3SA\tp\t

♠ K109
♥ Q2
♦ QJ1065
♣ QJ7

N

♠ QJ32
♥ 74
♦ 4
♣ K98653

O

E

♠ 84
♥ A10983
♦ A932
♣ 102

S

♠ A765
♥ KJ65
♦ K87
♣ A4

GIOCO

Ovest\tNord\tEst\tSud
5♣\t<u>J♣</u>\t2♣\t4♣"""
    ls = lines(text)
    spans = find_deals(ls)
    assert len(spans) == 1
    assert ls[spans[0].start] == "♠ K109" and ls[spans[0].end - 1] == "♣ A4"
    assert hands(spans[0].deal) == {
        "north": ("KT9", "Q2", "QJT65", "QJ7"),
        "west": ("QJ32", "74", "4", "K98653"),
        "east": ("84", "AT983", "A932", "T2"),
        "south": ("A765", "KJ65", "K87", "A4"),
    }
    assert deal_context(text) == {"dealer": "N", "vulnerability": "EW"}


def test_tab_grid_italian():
    text = """5

\t♠ J85\t
\t♥J83\t
\t♦K872\t
\t♣A43\t
♠ K1094\t\t♠ 63
♥A74\t\t♥K9652
♦653\t\t♦J10
♣K106\t\t♣J752
\t♠ AQ72\t
\t♥Q10\t
\t♦AQ94\t
\t♣Q98\t

Sud è dichiarante a 3SA."""
    ls = lines(text)
    spans = find_deals(ls)
    assert [(s.start, s.end) for s in spans] == [(2, 14)]
    deal = spans[0].deal
    assert hands(deal) == {
        "north": ("J85", "J83", "K872", "A43"),
        "west": ("KT94", "A74", "653", "KT6"),
        "east": ("63", "K9652", "JT", "J752"),
        "south": ("AQ72", "QT", "AQ94", "Q98"),
    }
    assert all(getattr(deal, s).cards() == 13 for s in SEATS)


def test_english_grid_with_unindented_north():
    text = "\n".join([
        "3",
        "♠ 854        ",
        "♥ KJ109        ",
        "♦ 752        ",
        "♣ A32        ",
        "♠ K96        ♠ QJ107",
        "♥ 763        ♥ Q84",
        "♦ QJ1086        ♦ A43",
        "♣ 96        ♣ Q84",
        "    ♠ A32    ",
        "    ♥ A52    ",
        "    ♦ K9    ",
        "    ♣ KJ1075    ",
        "South plays 3NT. The first trick is the ♦Q, ♦2, ♦A, ♦9.",
    ])
    deal = parse_deal(lines(text))
    assert hands(deal) == {
        "north": ("854", "KJT9", "752", "A32"),
        "west": ("K96", "763", "QJT86", "96"),
        "east": ("QJT7", "Q84", "A43", "Q84"),
        "south": ("A32", "A52", "K9", "KJT75"),
    }


def test_three_columns_with_filler_voids():
    text = """6

♠ ---\t♠ ---\t♠ ---
♥ 64\t♥ Q3\t♥ ---
♦ Q96\t♦ K\t♦ ---
♣ ---\t♣ 109\t♣ ---
♠ ---\t♠ ---\t♠ ---
♥ 85\t♥ ---\t♥ ---
♦ 75\t♦ ---\t♦ ---
♣ J\t♣ ---\t♣ ---
♠ ---\t♠ ---\t♠ ---
♥ 109\t♥ ---\t♥ ---
♦ AJ\t♦ ---\t♦ ---
♣ 5\t♣ ---\t♣ ---

Sud è dichiarante a 3SA ed ha già ottenuto 7 prese."""
    spans = find_deals(lines(text))
    assert [(s.start, s.end) for s in spans] == [(2, 14)]
    # the text says: dummy plays the 6♥ (North), East the Q♥, West the 5♥, South the J♦
    assert hands(spans[0].deal) == {
        "north": ("", "64", "Q96", ""),
        "west": ("", "85", "75", "J"),
        "east": ("", "Q3", "K", "T9"),
        "south": ("", "T9", "AJ", "5"),
    }
    assert all(getattr(spans[0].deal, s).cards() == 5 for s in SEATS)
    assert deal_context(text) == {"contract": "3NT"}


def test_english_version_of_the_three_column_deal_agrees():
    text = "\n".join([
        "7",
        "    ♠ ---    ",
        "    ♥ 64    ",
        "    ♦ Q96    ",
        "    ♣ ---    ",
        "♠ ---        ♠ ---",
        "♥ 85        ♥ Q3",
        "♦ 75        ♦ K",
        "♣ J        ♣ 109",
        "    ♠ ---    ",
        "    ♥ 109    ",
        "    ♦ AJ    ",
        "    ♣ 5    ",
    ])
    en = parse_deal(lines(text))
    assert hands(en)["east"] == ("", "Q3", "K", "T9")
    assert hands(en)["north"] == ("", "64", "Q96", "")


def test_grid_with_compass_and_duplicated_east_column():
    text = """♠ J1043
♥ 32
♦ A32
♣ K432

♠ K5\tN\t\t♠ 982\t\t♠ 982
♥ J10987 O\t\tE\t♥ KQ654\t\t♥ KQ654
♦ QJ109\t\t\t♦ 654\t\t♦ 654
♣ A6\tS\t\t♣ Q5\t\t♣ Q5

♠ AQ76
♥ A
♦ K87
♣ J10987

Preso l'attacco al morto con A♦, Nord gioca il J♠"""
    ls = lines(text)
    spans = find_deals(ls)
    assert [(s.start, s.end) for s in spans] == [(0, 14)]
    deal = spans[0].deal
    assert hands(deal) == {
        "north": ("JT43", "32", "A32", "K432"),
        "west": ("K5", "JT987", "QJT9", "A6"),
        "east": ("982", "KQ654", "654", "Q5"),
        "south": ("AQ76", "A", "K87", "JT987"),
    }
    assert all(getattr(deal, s).cards() == 13 for s in SEATS)


def test_english_partial_grid_with_compass_letters_has_no_east():
    text = "\n".join([
        "        ♠ J1043    ",
        "        ♥ 32    ",
        "        ♦ A32    ",
        "        ♣ K432    ",
        "♠ K5    W    N    ",
        "♥ J10987            E",
        "♦ QJ109            ",
        "♣ A6        S    ",
        "        ♠ AQ76    ",
        "        ♥ A    ",
        "        ♦ K87    ",
        "        ♣ J10987    ",
        "South is declarer in a 4♠ contract.",
    ])
    ls = lines(text)
    spans = find_deals(ls)
    assert [(s.start, s.end) for s in spans] == [(0, 12)]
    assert hands(spans[0].deal) == {
        "north": ("JT43", "32", "A32", "K432"),
        "west": ("K5", "JT987", "QJT9", "A6"),
        "east": None,
        "south": ("AQ76", "A", "K87", "JT987"),
    }
    assert deal_context(text) == {"contract": "4S"}


def test_english_law_46_grid_with_compass_inside_lines():
    text = "\n".join([
        "AUCTION",
        "N    E    S    W",
        "p    p    1NT    p",
        "3NT    all pass        ",
        "♠ K109",
        "♥ Q2",
        "♦ QJ1065",
        "♣ QJ7",
        "    N        ",
        "♠ QJ32            ♠ 84",
        "♥ 74    W    E    ♥ A10983",
        "♦ 4            ♦ A932",
        "♣ K98653            ♣ 102",
        "    S        ",
        "    ♠ A765        ",
        "    ♥ KJ65        ",
        "    ♦ K87        ",
        "    ♣ A4        ",
        "Play",
    ])
    ls = lines(text)
    spans = find_deals(ls)
    assert [(s.start, s.end) for s in spans] == [(4, 18)]
    assert hands(spans[0].deal)["east"] == ("84", "AT983", "A932", "T2")
    assert hands(spans[0].deal)["west"] == ("QJ32", "74", "4", "K98653")


def test_partial_diagrams_with_empty_suits():
    it = """3

\t♠  -\t
\t♥ -\t
\t♦ J9\t
\t♣ -\t
♠  K7\t\t♠  -
♥ -\t\t♥ Q
♦ -\t\t♦ 10
♣ -\t\t♣ -
\t♠  -\t
\t♥ 2\t
\t♦ 6\t
\t♣ -\t

N/S due noti giocatori italiani
Dichiarante Est nel contratto di 3SA."""
    deal = parse_deal(lines(it))
    assert hands(deal) == {
        "north": ("", "", "J9", ""),
        "west": ("K7", "", "", ""),
        "east": ("", "Q", "T", ""),
        "south": ("", "2", "6", ""),
    }
    assert deal_context(it) == {"contract": "3NT"}

    b5 = """46 B5 NE' SEME NE' RANGO DESIGNATI

\t♠\t
\t♥\t
\t♦\t
\t♣ KJ7\t
♠\t\t♠
♥\t\t♥
♦\t\t♦
♣ AQ4\t\t♣ 1098
\t♠\t
\t♥ 10\t
\t♦\t
\t♣ 62\t

Sud è dichiarante in 4♥ e ha fatto fino a qui 8 prese."""
    ls = lines(b5)
    spans = find_deals(ls)
    assert [(s.start, s.end) for s in spans] == [(2, 14)]
    assert hands(spans[0].deal) == {
        "north": ("", "", "", "KJ7"),
        "west": ("", "", "", "AQ4"),
        "east": ("", "", "", "T98"),
        "south": ("", "T", "", "62"),
    }

    en = "\n".join([
        "2",
        "    ♠ Q9    ",
        "    ♥ -    ",
        "    ♦ -    ",
        "    ♣ J109    ",
        "♠ -        ♠ J76",
        "♥ -        ♥ J",
        "♦ Q7        ♦ 3",
        "♣ Q76        ♣ -",
        "    ♠ -    ",
        "    ♥ Q1094    ",
        "    ♦ J    ",
        "    ♣ -    ",
        "South is playing 6♥.",
    ])
    deal = parse_deal(lines(en))
    assert hands(deal) == {
        "north": ("Q9", "", "", "JT9"),
        "west": ("", "", "Q7", "Q76"),
        "east": ("J76", "J", "3", ""),
        "south": ("", "QT94", "J", ""),
    }


def test_suit_table_is_one_hand_at_north():
    it = """Supponiamo un morto (Nord) di questo tipo:

♠\t♥\t♦\t♣
A\tK\tQ\tQ
7\t5\tJ\t10
3\t\t\t2

46 B1 INCOMPLETA DESIGNAZIONE DEL RANGO"""
    ls = lines(it)
    spans = find_deals(ls)
    assert [(s.start, s.end) for s in spans] == [(2, 6)]
    assert hands(spans[0].deal) == {"north": ("A73", "K5", "QJ", "QT2"), "east": None, "south": None,
                                    "west": None}
    en = """Assume a partial dummy (North) of this kind:
♠    ♥    ♦    ♣
A    K    Q    Q
7    Q    J    10
3    5        2
46 B1 INCOMPLETE DESIGNATION OF RANK"""
    spans = find_deals(lines(en))
    assert [(s.start, s.end) for s in spans] == [(1, 5)]
    assert spans[0].deal.north == Hand("A73", "KQ5", "QJ", "QT2")


def test_seat_labels_name_the_hands():
    it = """Essendo questa la situazione del seme di ♥:

\tNord
\t♥ A53
Ovest\t
Q♥\t
\tSud
\t♥ J76

Sud prende di Asso."""
    ls = lines(it)
    spans = find_deals(ls)
    assert [(s.start, s.end) for s in spans] == [(2, 8)]
    assert spans[0].deal.north == Hand("", "A53", "", "")
    assert spans[0].deal.west == Hand("", "Q", "", "")
    assert spans[0].deal.south == Hand("", "J76", "", "")
    assert spans[0].deal.east is None
    en = "    North\n    ♥ A53\nWest    \n♥ Q    \n    South\n    ♥ J76"
    assert parse_deal(lines(en)) == spans[0].deal


def test_one_hand_per_line_and_labels():
    text = "N: ♠ AK5 ♥ QJ3 ♦ 432 ♣ 5432\nS: ♠ QJ2 ♥ AK2 ♦ AK5 ♣ AK6"
    deal = parse_deal(lines(text))
    assert deal.north == Hand("AK5", "QJ3", "432", "5432")
    assert deal.south == Hand("QJ2", "AK2", "AK5", "AK6")
    assert deal.west is None and deal.east is None


def test_hands_side_by_side_under_seat_names():
    text = "Nord\tEst\tSud\tOvest\n♠ AK\t♠ QJ\t♠ 10\t♠ 98\n♥ 2\t♥ 3\t♥ 4\t♥ 5\n♦ -\t♦ -\t♦ A\t♦ K\n♣ Q\t♣ J\t♣ -\t♣ 2"
    spans = find_deals(lines(text))
    assert [(s.start, s.end) for s in spans] == [(0, 5)]
    assert hands(spans[0].deal) == {
        "north": ("AK", "2", "", "Q"),
        "east": ("QJ", "3", "", "J"),
        "south": ("T", "4", "A", ""),
        "west": ("98", "5", "K", "2"),
    }


def test_stacked_english_deal_stops_before_the_auction():
    text = """A further example:
♠ A2
♥ KJ983
♦ A4
♣ Q1074
♠ K53
♥ Q10
♦ KJ8765
♣ A2
♠ 1084
♥ 76542
♦ Q2
♣ J96
♠ QJ976
♥ A
♦ 1093
♣ K853
W    N    E    S
1♦    1♥    pass    1♠
2♦    X    pass    2♠"""
    ls = lines(text)
    spans = find_deals(ls)
    assert [(s.start, s.end) for s in spans] == [(1, 17)]
    d = spans[0].deal
    # West opened 1♦ (the long diamonds), North overcalled 1♥, South bid 1♠: order N, W, E, S
    assert d.west.diamonds == "KJ8765" and d.north.hearts == "KJ983" and d.south.spades == "QJ976"
    assert_consistent(d)


def test_several_diagrams_and_prose_lines_untouched():
    text = "\n".join([IT_STACKED, "", "testo", EN_GRID_SPACES])
    ls = lines(text)
    before = list(ls)
    spans = find_deals(ls)
    assert ls == before
    assert len(spans) == 2
    assert spans[0].end <= spans[1].start
    assert hands(spans[0].deal) == hands(spans[1].deal) == DEAL_45_1
    assert all(isinstance(s, DealSpan) for s in spans)


def test_two_stacked_diagrams_back_to_back_are_split():
    ls = [x for x in lines(IT_STACKED)[2:21]]
    spans = find_deals(ls + [""] + ls)
    assert len(spans) == 2
    assert hands(spans[0].deal) == hands(spans[1].deal) == DEAL_45_1


def test_prose_with_suit_symbols_is_not_a_diagram():
    text = """Sud gioca 3SA ed ha vinto la prima presa (3♠,2,10 e K)
The previous tricks were:
♠ 10,5,6,Q;
♦ A,5,2,10;
♦ Q,3,7,J;
♠ 2,K,8,6.
West    North    East    South
♣5    <u>♣J</u>    ♣2    ♣4
    <u>♦Q</u>    ♦2    ♦7    ♦4
5♣\t<u>J♣</u>\t2♣\t4♣
1♦    1♥    pass    1♠
♦5    ♦3    ♦K    ♥4
♣10    ♣A    ♣6    ♣7
♣10    ♣A    ♣6    ♣7
- B)** Same as A) but South holds the bare $\\spadesuit 4$.
Il morto ha AKQ10652 di quadri"""
    assert find_deals(lines(text)) == []
    assert find_deals([]) == []
    assert find_deals(["", "   ", "♠", "♥", "♦", "♣"]) == []


def test_errors_in_the_source_drop_a_seat_instead_of_inventing():
    # ART. 45 / 2 in the Italian file gives West ♣KQJ96 and East ♣T98: the 9 twice.
    text = """\t♠ J854\t
\t♥10963\t
\t♦52\t
\t♣A32\t
♠ K93\t\t♠ AQ76
♥KJ72\t\t♥Q84
♦6\t\t♦873
♣KQJ96\t\t♣T98
\t♠ T2\t
\t♥A5\t
\t♦AKQJT94\t
\t♣75\t"""
    deal = parse_deal(lines(text))
    assert deal.north.cards() == deal.west.cards() == deal.south.cards() == 13
    assert deal.east is None
    assert_consistent(deal)
    # a hand of more than 13 cards is not a hand
    big = "♠ AKQJT98\n♥ AKQJT98\n♦ 2\n♣ 3\n♠ 2\n♥ 2\n♦ 3\n♣ 4"
    d = parse_deal(lines(big))
    assert d is not None and d.north is None and d.south == Hand("2", "2", "3", "4")


def test_ranks_symbols_and_latex_variants():
    text = "♤ A K 10 2\n♡ x x x\n♢ —\n♧ J10"
    d = parse_deal(lines(text))
    assert d.north == Hand("AKT2", "xxx", "", "JT")
    latex = "$\\spadesuit AQ$\n$\\heartsuit 10 9$\n$\\diamondsuit -$\n$\\clubsuit K$"
    assert parse_deal(lines(latex)).north == Hand("AQ", "T9", "", "K")
    # ranks come out high to low, whatever order they were written in
    assert parse_deal(["♠ 2AK", "♥ Q", "♦ J", "♣ 3"]).north.spades == "AK2"


def test_stripped_lines_give_the_same_deals():
    for text in (EN_GRID_SPACES, IT_STACKED):
        ls = lines(text)
        assert [(s.start, s.deal) for s in find_deals(ls)] == \
            [(s.start, s.deal) for s in find_deals([x.strip() for x in ls])]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Sud gioca 3SA e riceve l'attacco di K♣", {"contract": "3NT"}),
        ("Sud è dichiarante a 2 picche. Riceve l'attacco", {"contract": "2S"}),
        ("Contratto 6♥ giocato da Sud", {"contract": "6H"}),
        ("Dichiarante Est nel contratto di 3SA. A questo punto", {"contract": "3NT"}),
        ("Sud è dichiarante in 4♥ e ha fatto fino a qui 8 prese.", {"contract": "4H"}),
        ("Dich. N. Vuln: EO", {"dealer": "N", "vulnerability": "EW"}),
        ("E/--\n\n♠KJ852", {"dealer": "E", "vulnerability": "None"}),
        ("Vuln: N/S", {"vulnerability": "NS"}),
        ("N/S", {"vulnerability": "NS"}),
        ("Tutti in zona", {"vulnerability": "All"}),
        ("Vulnerabilità: Tutti", {"vulnerability": "All"}),
        ("Nessuno", {"vulnerability": "None"}),
        ("Zona: Nessuno", {"vulnerability": "None"}),
        ("South is playing 2♠.", {"contract": "2S"}),
        ("South  is  playing  3NT  and  the  lead  is  the  ♣K.", {"contract": "3NT"}),
        ("South is declarer in a 4♥ contract and has won 8 tricks", {"contract": "4H"}),
        ("South is at the helm of 3NT; at this point", {"contract": "3NT"}),
        ("East plays 3NT. At this point he has 8 scored tricks.", {"contract": "3NT"}),
        ("Deal N, Vuln : EW", {"dealer": "N", "vulnerability": "EW"}),
        ("Dealer: South  Vul: Both", {"dealer": "S", "vulnerability": "All"}),
        ("W/All", {"dealer": "W", "vulnerability": "All"}),
        ("Love all", {"vulnerability": "None"}),
        # prose that only looks like it
        ("N/S due noti giocatori italiani", {}),
        ("2 prese a E/O.", {}),
        ("Est gioca asso di picche e 4 di picche", {}),
        ("Ovest gioca il 6♣, piccola, J♣ e Q♣", {}),
        ("a) nessuno ha giocato successivamente.", {}),
        ("La giuria cambiò il giudizio assegnando 6♥-1", {}),
        ("", {}),
    ],
)
def test_deal_context(text, expected):
    assert deal_context(text) == expected


# --- fuzzing ---------------------------------------------------------------------------------

_PIECES = ["♠", "♥", "♦", "♣", "♤", "♡", "♢", "♧", "A", "K", "Q", "J", "T", "10", "9", "2", "x", "-", "---",
           "—", " ", "  ", "    ", "\t", "N", "S", "E", "W", "O", "Nord", "West:", "3SA", "4♠", "Vuln:", "E/--",
           "$\\spadesuit", "$", ",", "<u>", "\u00a0", "\ufe0f", "\\", "\x00", "é", "1"]
_REAL = lines(IT_STACKED) + lines(EN_GRID_SPACES)
_line = st.one_of(
    st.lists(st.sampled_from(_PIECES), max_size=12).map("".join),
    st.sampled_from(_REAL),
    st.text(max_size=30),
)


def _check_spans(ls: list[str], spans: list[DealSpan]) -> None:
    last_end = 0
    for sp in spans:
        assert 0 <= sp.start < sp.end <= len(ls)
        assert sp.start >= last_end
        last_end = sp.end
        assert_consistent(sp.deal)
        assert any(getattr(sp.deal, s) is not None for s in SEATS)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_line, max_size=40))
def test_fuzz_never_crashes_and_never_breaks_the_rules(ls):
    spans = _find(ls)  # the unguarded version: an internal error must show up here
    _check_spans(ls, spans)
    assert find_deals(ls) == spans
    d = parse_deal(ls)
    if d is not None:
        assert_consistent(d)
    ctx = deal_context("\n".join(ls))
    assert set(ctx) <= {"dealer", "vulnerability", "contract"}
    assert ctx.get("dealer", "N") in {"N", "E", "S", "W"}
    assert ctx.get("vulnerability", "None") in {"None", "NS", "EW", "All"}


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(_REAL), max_size=60))
def test_fuzz_shuffled_real_lines(ls):
    _check_spans(ls, _find(ls))


def test_odd_inputs():
    assert find_deals(None) == []  # type: ignore[arg-type]
    assert parse_deal([None, 3]) is None  # type: ignore[list-item]
    assert deal_context(None) == {}  # type: ignore[arg-type]


# --- the real corpus, when it is there -------------------------------------------------------


@pytest.mark.skipif(not (CORPUS / "it_scuola-arbitrale_art45-47_2007.txt").exists(), reason="no corpus")
def test_italian_corpus_diagrams():
    ls = (CORPUS / "it_scuola-arbitrale_art45-47_2007.txt").read_text(encoding="utf-8").split("\n")
    spans = find_deals(ls)
    assert len(spans) == 14
    for sp in spans:
        assert_consistent(sp.deal)
        assert all("♠" in x or "♥" in x or "♦" in x or "♣" in x or not x.strip() or x.strip() in "NOES"
                   or x.strip() in ("Nord", "Ovest", "Sud") or x.strip()[:1] in "AQ73"
                   for x in ls[sp.start:sp.end])


@pytest.mark.skipif(not (CORPUS / "en_ebl-tds-workshop_law45-47_2011.pdf").exists(), reason="no corpus")
def test_english_corpus_diagrams():
    pypdf = pytest.importorskip("pypdf")
    reader = pypdf.PdfReader(str(CORPUS / "en_ebl-tds-workshop_law45-47_2011.pdf"))
    found = []
    for page in reader.pages:
        found += find_deals(page.extract_text().split("\n"))
    assert len(found) >= 13
    full = [sp.deal for sp in found if all(getattr(sp.deal, s) is not None for s in SEATS)]
    assert len(full) >= 10
    for sp in found:
        assert_consistent(sp.deal)
