"""Questions with a board record or framing around them: does the search still read the situation?

    .venv/bin/python bench/records.py [--kb-dir DIR] FILE.jsonl [FILE.jsonl ...]

Forum posts and rulings columns give the board number, dealer, vulnerability, hands and auction
around the question, and framing sentences (the event, "I was the TD", thanks). Each question of
each file is asked again with one record (or one framing sentence in the question's language)
added before or after it (by a hash of its id), for every item of a group, and scored as
`python -m kb eval` scores it; then once more with `Weights(record=False)` or `Weights(framing=False)`:
the addition read as if it were situation. Group A is what kb/record.py was developed on; group B
(other languages and layouts) was kept aside to check it; group C was written by a helper that saw
neither kb/record.py nor any question set, after the mechanism was built.
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


def with_record(q: dict, record: str) -> dict:
    after = zlib.crc32(q["id"].encode()) % 2
    return {**q, "query": f"{q['query']}\n\n{record}" if after else f"{record}\n\n{q['query']}"}


def scores(kb: KnowledgeBase, questions: list[dict], records: list[str | None]) -> tuple[float, float, float]:
    """Section R@5, law R@5, section MRR@10, averaged over the records."""
    total = [0.0, 0.0, 0.0]
    for rec in records:
        m = evaluate(kb, questions if rec is None else [with_record(q, rec) for q in questions]).metrics()
        for i, v in enumerate((m["section"]["R@5"], m["law"]["R@5"], m["section"]["MRR@10"])):
            total[i] += v
    return tuple(v / len(records) for v in total)  # type: ignore[return-value]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--kb-dir", type=Path)
    args = ap.parse_args()
    kb = KnowledgeBase.open(args.kb_dir)
    sets = {f.stem: load_questions(f) for f in args.files}
    print("section R@5 / law R@5 / section MRR@10")
    print("| questions | " + " | ".join(sets) + " |")
    print("|---|" + "---|" * len(sets))
    rows = [("as written", None, [None])]
    for group, recs in RECORDS.items():
        rows += [(f"+ record {group}, read as situation", False, recs), (f"+ record {group}, set aside", True, recs)]
    for name, aside, recs in rows:
        kb.weights = replace(Weights(), record=aside is not False)
        cells = [scores(kb, qs, recs) for qs in sets.values()]
        print(f"| {name} | " + " | ".join("/".join(f"{v:.2f}" for v in c) for c in cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
