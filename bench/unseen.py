"""Retrieval on documents nobody tuned or trained for: the default corpus plus eval/unseen/*.txt.

The two lessons in eval/unseen/ (English and Italian, written in session 15 by a helper who saw no code
and no corpus) cover six laws the default corpus does not (25, 27, 43, 57, 67, 73); the 48 questions in
eval/unseen/questions.jsonl (another helper, who saw neither the lessons nor the code) are decided by
those laws. The adapter (kb/models) was trained without any of it: this measures what it does to a
user's new documents about laws it never saw. Run it once as is and once with KB_ADAPTER=off:

    .venv/bin/python bench/unseen.py
    KB_ADAPTER=off .venv/bin/python bench/unseen.py
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    from kb import KnowledgeBase
    from kb.build import build
    from kb.embed import model_name
    from kb.evaluate import evaluate, load_questions

    with tempfile.TemporaryDirectory(prefix="bench-unseen-") as tmp:
        corpus = Path(tmp) / "corpus"
        shutil.copytree(ROOT / "corpus", corpus)
        unseen = sorted((ROOT / "eval" / "unseen").glob("*.txt"))
        for doc in unseen:
            shutil.copy(doc, corpus)
        result = build(corpus, Path(tmp) / "kb")
        for r in result.reports:
            if r.path in {d.name for d in unseen}:
                print(f"{r.path}: {r.passages} passages, {r.examples} worked examples")
        kb = KnowledgeBase.open(Path(tmp) / "kb")
        report = evaluate(kb, load_questions(ROOT / "eval" / "unseen" / "questions.jsonl"))
        print(f"model: {model_name()}\n")
        print(report.table())
    return 0


if __name__ == "__main__":
    sys.exit(main())
