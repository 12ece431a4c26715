"""python -m ingest [--corpus DIR] [--kb-dir DIR] [--dump] [--no-embed] [--strict]

Reads the corpus, builds the knowledge base (atomically), prints a summary per document.
Exit code: 0 when every file was read, 1 when some file failed (the rest is still indexed),
2 on a usage or environment error. With --strict a failed file aborts without touching the KB.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from kb import lawref
from kb.store import default_corpus_dir, default_kb_dir

from .catalog import load_catalog
from .pipeline import process_corpus


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m ingest", description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=None, help="source documents (default: CORPUS_DIR or ./corpus)")
    ap.add_argument("--kb-dir", type=Path, default=None, help="knowledge base folder (default: KB_DIR or ./.kb)")
    ap.add_argument("--dump", action="store_true", help="print passages as JSON lines instead of building")
    ap.add_argument("--no-embed", action="store_true", help="passages and lexical index only (no model)")
    ap.add_argument("--strict", action="store_true", help="any failed file is fatal (for scripts)")
    ap.add_argument("--index", default="auto", choices=["auto", "flat", "hnsw"], help="FAISS index type")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    corpus = args.corpus or default_corpus_dir()
    kb_dir = args.kb_dir or default_kb_dir()
    if not corpus.is_dir():
        print(f"error: corpus folder not found: {corpus}", file=sys.stderr)
        return 2

    if args.dump:
        catalog, _ = load_catalog(corpus)
        failed = 0
        for _path, passages, report, _raw in process_corpus(corpus, catalog):
            if report.status not in ("ok",):
                print(f"# {report.path}: {report.status}: {report.message}", file=sys.stderr)
                failed += report.status == "failed"
            for p in passages:
                print(json.dumps(p.to_dict(), ensure_ascii=False))
        return 1 if failed else 0

    from kb.build import build

    progress = None if args.quiet else _progress_printer()
    t0 = time.perf_counter()
    try:
        # --strict is checked inside the build, after loading and before anything is written: it sees
        # every failure the build would report (same-name files included) and reads each file once.
        result = build(corpus, kb_dir, progress=progress, embed=not args.no_embed, index_type=args.index,
                       strict=args.strict)
    except KeyboardInterrupt:
        print("\ninterrupted: the previous knowledge base is unchanged", file=sys.stderr)
        return 130
    if not args.quiet:
        sys.stderr.write("\n")
    if args.strict and result.failed:
        for r in result.failed:
            print(f"error: {_shown(r.path)}: {r.message}", file=sys.stderr)
        print("nothing was changed (--strict)", file=sys.stderr)
        return 1
    print(summary(result, time.perf_counter() - t0, kb_dir))
    return 1 if result.failed else 0


def _progress_printer():
    last = {"stage": None}

    def show(stage: str, done: int, total: int, detail: str) -> None:
        width = 28
        frac = done / total if total else 1.0
        bar = "█" * int(frac * width) + "·" * (width - int(frac * width))
        if last["stage"] not in (None, stage):
            sys.stderr.write("\n")
        last["stage"] = stage
        sys.stderr.write(f"\r{stage:<6} {bar} {done}/{total} {detail[:40]:<40}")
        sys.stderr.flush()

    return show


def summary(result, seconds: float, kb_dir: Path) -> str:
    lines = []
    for r in result.reports:
        if r.status in ("ok", "unchanged"):
            kinds = ", ".join(f"{k} {v}" for k, v in sorted(r.by_kind.items()))
            langs = ", ".join(f"{k} {v}" for k, v in sorted(r.by_lang.items()))
            laws = _law_span(r.laws)
            lines.append(f"{r.status:>9}  {_shown(r.path)}: {r.pages} pages, {r.passages} passages ({kinds}; {langs}); "
                         f"{r.examples} worked examples; laws {laws}")
            if r.cleaned:
                lines.append(" " * 11 + "cleaned: " + ", ".join(f"{k} {v}" for k, v in sorted(r.cleaned.items())))
            for note in r.notes:
                lines.append(" " * 11 + "note: " + note)
        else:
            lines.append(f"{r.status:>9}  {_shown(r.path)}: {r.message}")
    ok = sum(r.status in ("ok", "unchanged") for r in result.reports)
    lines.append(f"{ok} of {len(result.reports)} files indexed, {result.passages} passages "
                 f"({result.embedded} embedded, {result.reused_vectors} reused) in {seconds:.1f}s → "
                 f"{result.generation or kb_dir}")
    if result.failed:
        lines.append(f"{len(result.failed)} file(s) failed; the others are indexed")
    return "\n".join(lines)


def _shown(path: str) -> str:
    """A file name on one summary line: a newline or other control character in the name is shown
    escaped (\\n), so the name can neither break the one-line-per-file summary nor fake a line of it."""
    return "".join(c if c.isprintable() or c == " " else ascii(c)[1:-1] for c in path)


def _law_span(laws: list[str]) -> str:
    nums = sorted({lawref.parts(a)[0] for a in laws})
    return ", ".join(map(str, nums)) if nums else "-"


if __name__ == "__main__":
    sys.exit(main())
