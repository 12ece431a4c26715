"""Each retrieval mechanism on and off, on question files (dev set, our own held-out set).

    .venv/bin/python bench/ablation.py [--kb-dir DIR] FILE.jsonl [FILE.jsonl ...]

Prints, per file and configuration: section Recall@5, law Recall@5, section MRR@10, cross-language
section Recall@5. The knowledge base must have been built (python -m ingest).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kb import KnowledgeBase  # noqa: E402
from kb.evaluate import evaluate, load_questions  # noqa: E402
from kb.glossary import question_glossary  # noqa: E402
from kb.search import Weights  # noqa: E402

BASE = Weights()
CONFIGS: dict[str, Weights] = {
    "full": BASE,
    "- lexical (words)": replace(BASE, lexical=0.0),
    "- lexical (concepts)": replace(BASE, concepts=0.0),
    "- dense": replace(BASE, dense=0.0, dense_expand=0.0),
    "dense weight 1 (before the adapter)": replace(BASE, dense=1.0),
    "- adapter (plain e5-small; dense weight 1)": replace(BASE, dense=1.0),  # on a KB built with KB_ADAPTER=off
    "- glossary expansion (lexical)": replace(BASE, expand=False),
    "- a gap in long terms of questions": BASE,  # same weights; questions read word for word (see main)
    "+ dense query of question + expansion (0.5)": replace(BASE, dense_expand=0.5),
    "- dense per-language ranks": replace(BASE, dense_lang=0.0),
    "- dense target-language queries": replace(BASE, dense_target=0.0),
    "embedded glossary texts instead of composed concept vectors": replace(BASE, compose=False),
    "+ document-side expansion": BASE,  # same weights, on a KB built with it (built aside, once)
    "+ law evidence (0.5)": replace(BASE, law_evidence=0.5),
    "- untagged/generic priors": replace(BASE, untagged=1.0, generic=1.0),
    "+ kind prior (commentary 0.85)": replace(BASE, kind_prior={"commentary": 0.85}),
    "- diversity": replace(BASE, diversity=1.0),
    "- ref boost": replace(BASE, ref_boost=0.0, cited=0.0),
    # a law named inside a story leading outright (a boost of 1.0, as before session 17)
    "- a cited law as evidence only": replace(BASE, cited=BASE.rrf_k + 1),
    "- Greek accents restored for the model": replace(BASE, accents=False),
    "- Greeklish read as Greek": replace(BASE, greeklish=False),
    "- concept-law hints": replace(BASE, concept_laws=0.0),
    "- precedents (laws of the nearest labelled questions)": replace(BASE, precedents=0.0),
    "precedents: a law no precedent covers counts as no vote (0)": replace(BASE, unknown_law=0.0),
    "precedents: full votes however far the nearest precedent": replace(BASE, precedent_fade=False),
    "- passages of the other phase than the story's lowered": replace(BASE, phase=1.0),
    "- hinted laws as law tokens (lexical concepts list)": replace(BASE, hint_tokens=False),
    "+ routine concepts hint beside others (1.0)": replace(BASE, routine_hints=1.0),
    "- concepts said in parts (questions)": BASE,  # same weights; questions read without implied_by (see main)
    "- parts in the next sentence (implied_reach 0)": BASE,  # same weights; every implied_by in one clause
    "- concepts that override others (questions)": BASE,  # same weights; `overrides` ignored
    "- a concept of both phases read in the story's phase (questions)": BASE,  # same weights; `use_phases` off
    # same weights; questions matched without the glossary's word groups (my/his, παρτενέρ/συμπαίκτης) and
    # without a suit term's other suits ("δεν έχεις κούπες" for "δεν έχεις πίκα")
    "- first-person words and every suit read as the terms' (questions)": BASE,
    "plain RRF (lexical+dense only)": Weights(expand=False, dense_expand=0.0, dense_lang=0.0, dense_target=0.0,
                                              concepts=0.0, law_evidence=0.0, kind_prior={}, untagged=1.0,
                                              generic=1.0, diversity=1.0, concept_laws=0.0),
}


def row(name: str, report) -> str:
    m = report.metrics()
    cross = report.metrics(lambda r: r.cross)
    return (f"| {name} | {m['section']['R@5']:.2f} | {m['law']['R@5']:.2f} | {m['section']['MRR@10']:.2f} | "
            f"{cross['section']['R@5']:.2f} ({int(cross['section']['n'])}) |")


@contextlib.contextmanager
def _words_as_written(questions):
    """The question glossary matching each word as written: no word groups, no suit variants."""
    import kb.glossary as G

    same, suits = dict(G._SAME_WORD), dict(G._SUIT_GROUP)
    root, steps = questions._root, questions._step_cache
    G._SAME_WORD.clear()
    G._SUIT_GROUP.clear()
    G._fold_word.cache_clear()
    questions._root, questions._step_cache = G._Node(), {}
    questions._compile()
    try:
        yield
    finally:
        G._SAME_WORD.update(same)
        G._SUIT_GROUP.update(suits)
        G._fold_word.cache_clear()
        questions._root, questions._step_cache = root, steps
        questions.forget()


@contextlib.contextmanager
def _no_adapter():
    """The plain model for what runs inside (the embedder is chosen, and cached, by the adapter setting)."""
    old = os.environ.get("KB_ADAPTER")
    os.environ["KB_ADAPTER"] = "off"
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("KB_ADAPTER")
        else:
            os.environ["KB_ADAPTER"] = old


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--kb-dir", type=Path)
    ap.add_argument("--only", help="comma-separated config names")
    args = ap.parse_args()
    kb = KnowledgeBase.open(args.kb_dir)
    names = args.only.split(",") if args.only else list(CONFIGS)
    withexp = None
    if "+ document-side expansion" in names:
        import tempfile

        from kb.build import build
        from kb.store import default_corpus_dir

        tmp = Path(tempfile.mkdtemp(prefix="kb-docexp-"))
        build(default_corpus_dir(), tmp, doc_expansion=True)
        withexp = KnowledgeBase.open(tmp)
    plain = None
    if "- adapter (plain e5-small; dense weight 1)" in names:
        import tempfile

        from kb.build import build
        from kb.store import default_corpus_dir

        tmp = Path(tempfile.mkdtemp(prefix="kb-plain-"))
        with _no_adapter():
            build(default_corpus_dir(), tmp)
        plain = KnowledgeBase.open(tmp)
    for f in args.files:
        qs = load_questions(f)
        print(f"\n{f} ({len(qs)} questions)\n")
        print("| configuration | section R@5 | law R@5 | section MRR@10 | cross-language section R@5 (n) |")
        print("|---|---|---|---|---|")
        for name in names:
            target = {"+ document-side expansion": withexp, "- adapter (plain e5-small; dense weight 1)": plain}.get(name, kb)
            questions = question_glossary()
            gap, implied, reach, overrides = questions.gap, questions._implied, questions.reach, questions.use_overrides
            phases = questions.use_phases
            if name == "- a gap in long terms of questions":
                questions.gap = 0
            if name == "- concepts said in parts (questions)":
                questions._implied = []
            if name == "- concepts that override others (questions)":
                questions.use_overrides = False
            if name == "- a concept of both phases read in the story's phase (questions)":
                questions.use_phases = False
            if name == "- parts in the next sentence (implied_reach 0)":
                questions.reach = 0
            questions.forget()  # what it matched before is read again the new way
            try:
                as_written = name == "- first-person words and every suit read as the terms' (questions)"
                with (_no_adapter() if target is plain else contextlib.nullcontext(),
                      _words_as_written(questions) if as_written else contextlib.nullcontext()):
                    print(row(name, evaluate(target, qs, weights=CONFIGS[name])), flush=True)
            finally:
                questions._implied, questions.reach, questions.use_overrides = implied, reach, overrides
                questions.use_phases = phases
                questions.gap = gap  # and forgets
    return 0


if __name__ == "__main__":
    sys.exit(main())
