"""Questions with a board record or framing around them: does the search still read the situation?

    .venv/bin/python bench/records.py [--kb-dir DIR] [--only 'framing C'] FILE.jsonl [FILE.jsonl ...]

Forum posts and rulings columns give the board number, dealer, vulnerability, hands and auction
around the question, and framing sentences (the event, "I was the TD", thanks). Each question of
each file is asked again with one record (or one framing sentence in the question's language)
added before or after it (by a hash of its id), for every item of a group, and scored as
`python -m kb eval` scores it; then once more with `Weights(record=False)` or `Weights(framing=False)`:
the addition read as if it were situation. Group A is what kb/record.py was developed on; group B
of records (other languages and layouts) was kept aside to check it; framing group C (four sentences
in each of seven languages) was written by a helper that saw neither kb/record.py nor any question
set, after the mechanism was built.
"""

from __future__ import annotations

import argparse
import sys
import zlib
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kb import KnowledgeBase  # noqa: E402
from kb.evaluate import evaluate, load_questions  # noqa: E402
from kb.search import Weights  # noqa: E402

RECORDS = {
    "A": [
        "Board 14, dealer East, N/S vulnerable, teams.\nNorth: ♠ A K 5 3 ♥ Q 10 2 ♦ J 8 4 ♣ K 7 6\n"
        "West: ♠ Q 9 ♥ A J 8 7 ♦ K 10 9 3 ♣ Q 5 2   East: ♠ 10 8 7 2 ♥ 6 5 ♦ A Q 7 ♣ J 10 9 4\n"
        "South: ♠ J 6 4 ♥ K 9 4 3 ♦ 6 5 2 ♣ A 8 3\nAuction: 1♣ – 1♥ – X – 2♥ – 3♣ – P – 3NT – all pass.",
        "Bd 22  Dlr: E  Vul: E/W\nS AK53 H Q102 D J84 C K76\nAuction: 1S P 2H X 2S P 4S AP",
        "Smazzata 7, dich. Sud, tutti in zona.\nNord ♠ A K 5 ♥ 9 7 3 ♦ K Q J 2 ♣ 10 8 4\n"
        "Licita: 1♥ passo 2♣ contro passo 3♣ fine.",
        "Board 5, μοιράζει ο Βορράς, όλοι στη ζώνη.\nΑγορά: 1♠ πας 2♦ πας 2♥ πας 4♠ πας πας πας",
        "W N E S\n1♦ 1♠ 2♥ 2♠\n3♥ P P 3♠\nall pass",
    ],
    "B": [
        "Donne 9, donneur Ouest, personne vulnérable.\nEnchères : 1♣ passe 1♠ contre passe 2♠ passe passe passe\n"
        "Nord : ♠ A D 10 4 ♥ R 7 ♦ 9 8 6 5 ♣ V 3 2",
        "Board 3, Teiler Süd, alle in Gefahr.\nReizung: 1♥ – 1♠ – 2♥ – 2♠ – 3♥ – passe – passe – passe",
        "Mano 11, reparte Este, vulnerables N-S.\nSubasta: 1SA pasa 2♣ pasa 2♥ pasa 4♥ todos pasan",
        "Dlr: N   Vul: None\n♠ QJ9\n♥ AK42\n♦ 873\n♣ J105\n\n♠ 8 6 5 4     ♠ A K 7\n♥ 10 3        ♥ Q J 9 8\n"
        "♦ K Q 4       ♦ J 10 2\n♣ A 9 7 3     ♣ 8 6 4",
        "My hand: ♠KJ4 ♥A853 ♦Q2 ♣K1065. Bidding went 1NT (2♥) X (P) 3NT all pass.",
    ],
}

# Framing, per language of the question (English for the others): two sentences a language.
FRAMING = {
    "A": {
        "en": ["Club duplicate last Tuesday, 24 tables, I was the TD.",
               "Teams match last night, I was directing. Grateful for opinions."],
        "it": ["Ero l'arbitro di un simultaneo a coppie, 14 tavoli.",
               "Torneo a squadre di ieri sera, ero io l'arbitro. Grazie a chi risponde."],
        "el": ["Σε ένα τουρνουά ζευγαριών ήμουν ο διαιτητής.",
               "Χθες βράδυ στον όμιλο, ήμουν διαιτητής. Ευχαριστώ για κάθε γνώμη."],
        "fr": ["Tournoi par paires au club, j'étais l'arbitre. Merci d'avance.", "Match par quatre hier soir, j'arbitrais."],
        "de": ["Gestern im Club, ich war Turnierleiter.",
               "Paarturnier mit 12 Tischen, ich habe geleitet. Danke für Meinungen."],
        "es": ["Torneo de parejas en el club, yo era el director.",
               "Anoche en un match por equipos, dirigía yo. Gracias de antemano."],
    },
    "C": {
        "en": [
            "Hi all, this came up at our Tuesday evening club duplicate last week, 11 tables, and I was the director on duty.",
            "Regional Swiss teams at the county congress on Saturday, seven rounds of eight boards. I was playing, not directing. Curious what the experts here think.",
            "Online pairs game on BBO last night, about 40 tables, I was one of the two TDs. Thanks in advance for any input!",
            "Second-division league match, home fixture at our club in Leeds, I was captain of the visiting side. Any thoughts appreciated, cheers.",
        ],
        "it": [
            "Ciao a tutti, torneo a coppie del giovedì sera al nostro circolo, 14 tavoli, io ero l'arbitro.",
            "Buongiorno, scrivo da giocatore: campionato regionale a squadre, girone di sabato pomeriggio a Bologna. Grazie in anticipo a chi vorrà rispondere.",
            "Simultaneo nazionale di lunedì scorso, una ventina di tavoli nella nostra sede, arbitravo io. Mi farebbe piacere sentire i vostri pareri.",
            "Torneo online su BBO organizzato dalla nostra associazione, 30 tavoli circa, ero capitano non giocatore. Grazie mille e buon bridge a tutti!",
        ],
        "el": [
            "Καλησπέρα σε όλους, τουρνουά ζευγαριών στον σύλλογό μας την Τετάρτη το βράδυ, 10 τραπέζια, ήμουν ο διαιτητής.",
            "Γεια σας, γράφω ως παίκτης από το πανελλήνιο τουρνουά ομάδων στη Θεσσαλονίκη το περασμένο Σαββατοκύριακο. Θα ήθελα τη γνώμη σας.",
            "Χθες το βράδυ στο online τουρνουά του BBO, περίπου 25 τραπέζια, ήμουν ένας από τους διαιτητές. Ευχαριστώ προκαταβολικά για κάθε απάντηση.",
            "Αγώνας πρωταθλήματος ομάδων στην Αθήνα την Κυριακή, ήμουν αρχηγός της ομάδας μας. Κάθε σχόλιο ευπρόσδεκτο, ευχαριστώ!",
        ],
        "fr": [
            "Bonjour à tous, tournoi de régularité par paires au club mardi après-midi, 12 tables, j'étais l'arbitre.",
            "Samedi dernier, rencontre d'interclubs par quatre à Lyon ; j'étais joueur dans l'équipe recevante. Je serais curieux de connaître votre avis.",
            "Simultané national de jeudi soir, 18 tables dans notre club, arbitré par moi-même. Merci d'avance pour vos réponses !",
            "Tournoi en ligne sur BBO organisé par notre comité, une cinquantaine de tables, j'étais capitaine non joueur. Toute opinion est la bienvenue, bonne journée.",
        ],
        "de": [
            "Hallo zusammen, Paarturnier im Club am Montagabend, 9 Tische, ich war der Turnierleiter.",
            "Ich habe beim Teamturnier in Hamburg am vergangenen Wochenende als Spieler teilgenommen, Swiss-System mit sieben Runden. Mich würde eure Meinung interessieren.",
            "Gestern Abend Online-Paarturnier auf BBO, etwa 35 Tische, ich war einer der Turnierleiter. Vielen Dank schon mal für eure Antworten!",
            "Ligaspiel der Bezirksliga am Sonntag bei uns im Clubheim in Köln, ich war Mannschaftskapitän. Freue mich über jede Einschätzung, viele Grüße.",
        ],
        "es": [
            "Hola a todos, torneo de parejas del miércoles por la tarde en nuestro club, 13 mesas, yo era el árbitro.",
            "Buenas, escribo como jugador: campeonato territorial por equipos en Valencia el pasado fin de semana, sistema suizo. Me gustaría conocer vuestra opinión.",
            "Simultáneo de la federación el viernes pasado, unas 16 mesas en nuestra sede, dirigía yo. ¡Gracias de antemano por vuestras respuestas!",
            "Torneo online en BBO organizado por nuestro club, alrededor de 40 mesas, yo era capitán del equipo. Cualquier comentario será bienvenido, un saludo.",
        ],
        "nl": [
            "Hallo allemaal, parenwedstrijd op de clubavond van dinsdag, 10 tafels, ik was wedstrijdleider.",
            "Ik speelde afgelopen zaterdag mee in de viertallencompetitie in Utrecht, derde ronde. Ben benieuwd wat jullie ervan vinden.",
            "Gisteravond online parenwedstrijd op BBO, zo'n 30 tafels, ik was een van de wedstrijdleiders. Alvast bedankt voor jullie reacties!",
            "Simultaandrive van de bond op vrijdag, 14 tafels bij ons in het clubhuis in Groningen, ik speelde zelf mee. Alle meningen welkom, groeten.",
        ],
    },
}


def added(q: dict, extra: str, sep: str) -> dict:
    after = zlib.crc32(q["id"].encode()) % 2
    return {**q, "query": f"{q['query']}{sep}{extra}" if after else f"{extra}{sep}{q['query']}"}


def variants(questions: list[dict], kind: str, group) -> list[list[dict]]:
    """The question set once per record of the group, or once per framing sentence of each language."""
    if kind == "record":
        return [[added(q, rec, "\n\n") for q in questions] for rec in group]
    n = min(len(v) for v in group.values())
    return [[added(q, group.get(q["lang"], group["en"])[i], " ") for q in questions] for i in range(n)]


def scores(kb: KnowledgeBase, runs: list[list[dict]]) -> tuple[float, float, float]:
    """Section R@5, law R@5, section MRR@10, averaged over the runs."""
    total = [0.0, 0.0, 0.0]
    for questions in runs:
        m = evaluate(kb, questions).metrics()
        for i, v in enumerate((m["section"]["R@5"], m["law"]["R@5"], m["section"]["MRR@10"])):
            total[i] += v
    return tuple(v / len(runs) for v in total)  # type: ignore[return-value]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--kb-dir", type=Path)
    ap.add_argument("--only", default="", help="only the rows whose name holds this, e.g. 'framing C'")
    args = ap.parse_args()
    kb = KnowledgeBase.open(args.kb_dir)
    sets = {f.stem: load_questions(f) for f in args.files}
    print("section R@5 / law R@5 / section MRR@10")
    print("| questions | " + " | ".join(sets) + " |")
    print("|---|" + "---|" * len(sets))
    rows = [("as written", Weights(), None, None)]
    for kind, groups in (("record", RECORDS), ("framing", FRAMING)):
        for group, items in groups.items():
            rows += [(f"+ {kind} {group}, read as situation", replace(Weights(), **{kind: False}), kind, items),
                     (f"+ {kind} {group}, set aside", Weights(), kind, items)]
    for name, weights, kind, items in rows:
        if kind is not None and args.only not in name:
            continue
        kb.weights = weights
        cells = [scores(kb, [qs] if kind is None else variants(qs, kind, items)) for qs in sets.values()]
        print(f"| {name} | " + " | ".join("/".join(f"{v:.2f}" for v in c) for c in cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
