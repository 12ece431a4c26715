"""Retrieval on documents nobody tuned or trained for: the default corpus plus each eval/unseen*/ set.

Each folder holds lessons on laws the default corpus does not cover and questions decided by those laws,
written by helpers who saw no code and no corpus (the question writers did not see the lessons either):

* eval/unseen/ (session 15): English and Italian lessons on Laws 25, 27, 43, 57, 67, 73; 48 questions.
* eval/unseen2/ (session 16): a Greek lesson on Laws 16, 20, 21 and an English one on Laws 24, 65, 66,
  69, 70, 71 (claims, arranging and inspecting tricks); 48 questions.
* eval/unseen3/ (session 20): handouts in English (Laws 42, 44, 74, 75, 76), Italian (13, 14, 15, 59, 60) and
  Greek (26, 35-39), each section named at the start of its paragraph and each case on its example's line; 48
  questions. Its questions and results were never read (its documents' segmentation was: see ingest/segment.py).
* eval/unseen4/ (session 20): a questions-and-answers page in English (Laws 12, 79, 82, 85), a Markdown handout in
  Italian (17, 18, 19, 22, 23) and an appeals bulletin in Greek (81, 83, 86, 92, 93); 48 questions, never read.

The adapter (kb/models) was trained without any of it: this measures what it does to a user's new
documents about laws it never saw. Run it once as is and once with KB_ADAPTER=off:

    .venv/bin/python bench/unseen.py [eval/unseen2 ...]
    KB_ADAPTER=off .venv/bin/python bench/unseen.py
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def run_set(folder: Path) -> str:
    """Build the default corpus plus `folder`'s documents in a scratch folder; the questions' table."""
    from kb import KnowledgeBase
    from kb.build import build
    from kb.evaluate import evaluate, load_questions

    with tempfile.TemporaryDirectory(prefix="bench-unseen-") as tmp:
        corpus = Path(tmp) / "corpus"
        shutil.copytree(ROOT / "corpus", corpus)
        docs = sorted(p for p in folder.iterdir() if p.suffix.lower() in {".txt", ".pdf", ".md"})
        for doc in docs:
            shutil.copy(doc, corpus)
        result = build(corpus, Path(tmp) / "kb")
        for r in result.reports:
            if r.path in {d.name for d in docs}:
                print(f"{r.path}: {r.passages} passages, {r.examples} worked examples")
        kb = KnowledgeBase.open(Path(tmp) / "kb")
        return evaluate(kb, load_questions(folder / "questions.jsonl")).table()


def main(argv: list[str] | None = None) -> int:
    from kb.embed import model_name

    args = sys.argv[1:] if argv is None else argv
    folders = [Path(a) for a in args] or sorted(p for p in (ROOT / "eval").glob("unseen*") if p.is_dir())
    print(f"model: {model_name()}")
    for folder in folders:
        print(f"\n## {folder.name}\n")
        table = run_set(folder)
        print(f"\n{table}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
