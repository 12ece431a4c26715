"""python -m kb — the knowledge base from the command line (mirrors the library).

  search "QUERY" [-k 10] [--lang it,en] [--kind example] [--law 46B] [--doc FILE] [--json]
  search --batch FILE [-k 10] --json        one query per line in, one JSON line per query out
  law REF · examples REF · refs TEXT · stats · eval FILE.jsonl     (each with --json)
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

from . import lawref
from .render import same_text_line


def _kb(args):
    from .knowledge import KnowledgeBase

    return KnowledgeBase.open(args.kb_dir)


def _dump(obj) -> str:
    return json.dumps(obj, ensure_ascii=False)


def cmd_search(args) -> int:
    kb = _kb(args)
    kw = {"k": args.k, "lang": args.lang, "kind": args.kind, "law": args.law, "doc": args.doc}
    if args.batch:
        kb.warm_up()
        src = sys.stdin if args.batch == "-" else open(args.batch, encoding="utf-8")
        with src:
            for line in src:
                q = line.rstrip("\n")
                if not q.strip():
                    continue
                res = kb.search(q, **kw)
                out = {"query": q, "lang": res.lang, "refs": res.refs, "notices": res.notices,
                       "record": res.record, "framing": res.framing, "hits": [asdict(h) for h in res.hits]}
                print(_dump(out), flush=True)
        return 0
    if not args.query:
        print("error: give a QUERY or --batch FILE", file=sys.stderr)
        return 2
    res = kb.search(" ".join(args.query), **kw)
    if args.json:
        print(_dump(asdict(res)))
        return 0
    print(f"query language: {res.lang}" + (f" · law refs: {', '.join(res.refs)}" if res.refs else ""))
    if res.record:
        print("not searched, the board's record: " + " · ".join(res.record))
    if res.framing:
        print("not searched, framing: " + " · ".join(res.framing))
    for n in res.notices:
        print(f"note: {n}")
    for i, h in enumerate(res.hits, 1):
        laws = ", ".join(h.laws) or ("~" + ", ".join(h.inferred) if h.inferred else "-")
        pages = f"p.{h.page}" + (f"-{h.page_end}" if h.page_end else "")
        print(f"\n{i:>2}. [{h.kind}] {h.title}  ({h.lang.upper()})  laws: {laws}")
        print(f"    {h.doc} {pages}  score {h.score:.4f}")
        print("    " + h.snippet.replace("\n", " "))
        if h.same_text:
            print("    " + same_text_line(h, h.same_text))
        if h.also_in:
            print("    also in: " + ", ".join(f"{a.lang.upper()} p.{a.page} ({a.law})" for a in h.also_in))
    return 0


def cmd_law(args) -> int:
    kb = _kb(args)
    v = kb.law(args.ref)
    if args.json:
        print(_dump(asdict(v)))
        return 0 if v.exists else 1
    if not v.exists:
        print(v.message)
        return 1
    crumbs = " → ".join([*v.ancestors, v.ref])
    print(f"Law {v.ref}  {v.title}\n{crumbs}")
    if v.children:
        print("sub-paragraphs: " + ", ".join(v.children))
    for lang, hits in v.by_lang.items():
        print(f"\n== {lang.upper()} ==")
        for h in hits:
            laws = ", ".join(h.laws) or "probably " + ", ".join(h.inferred)
            print(f"[{h.kind}] {h.title} ({h.doc} p.{h.page}) laws: {laws}")
            print("  " + h.text.replace("\n", "\n  ")[:1200])
            if h.same_text:
                print("  (" + same_text_line(h, h.same_text) + ")")
    if v.examples:
        print("\n== worked examples ==")
        for h in v.examples:
            print(f"[{h.lang.upper()}] {h.title} ({h.doc} p.{h.page}) laws: {', '.join(h.laws)}")
    if v.cited_by:
        print("\ncited by: " + "; ".join(f"{h.title} ({h.lang.upper()})" for h in v.cited_by[:10]))
    if v.related:
        print("related laws: " + ", ".join(f"{r} ({n})" for r, n in v.related))
    return 0


def cmd_examples(args) -> int:
    kb = _kb(args)
    if args.ref and not lawref.canonical(args.ref):
        print(f"'{args.ref}' is not a law address")
        return 1
    ex = kb.examples(args.ref)
    if args.json:
        print(_dump([asdict(h) for h in ex]))
        return 0
    if not ex:
        print(f"no worked examples for {args.ref}")
        return 1
    from ingest.model import Deal

    from .render import deal_text

    for h in ex:
        print(f"\n### {h.title}  [{h.lang.upper()}] {h.doc} p.{h.page}  laws: {', '.join(h.laws)}")
        if h.deal and args.deals:
            print(deal_text(Deal.from_dict(h.deal)))
        if h.question:
            print("Q: " + h.question[:600])
        if h.answer:
            print("A: " + h.answer[:600])
    print(f"\n{len(ex)} example passages")
    return 0


def cmd_refs(args) -> int:
    refs = lawref.parse_refs(" ".join(args.text))
    print(_dump(refs) if args.json else (" ".join(refs) or "(no law references)"))
    return 0


def cmd_stats(args) -> int:
    s = _kb(args).stats()
    if args.json:
        print(_dump(asdict(s)))
        return 0
    print(f"knowledge base: {s.kb_dir} ({s.generation})\nmodel: {s.model or '-'} · index: {s.index}")
    print(f"{s.documents} documents, {s.passages} passages, {s.examples} worked examples")
    print("by kind: " + ", ".join(f"{k} {v}" for k, v in s.by_kind.items()))
    print("by language: " + ", ".join(f"{k} {v}" for k, v in s.by_lang.items()))
    print(f"{len(s.laws)} law addresses: " + " ".join(s.laws))
    return 0


def cmd_eval(args) -> int:
    from .evaluate import evaluate, load_questions

    kb = _kb(args)
    report = evaluate(kb, load_questions(Path(args.file)), k=10)
    if args.json:
        print(_dump(report.to_dict()))
        return 0
    print(report.table())
    if args.verbose:
        for r in report.results:
            print(f"{r.id} [{r.lang}{' x' if r.cross else ''}] gold={r.gold} section@={r.ranks['section']} "
                  f"top3={r.top[:3]}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m kb", description="Bridge laws knowledge base")
    ap.add_argument("--kb-dir", type=Path, default=None, help="knowledge base folder (default: KB_DIR or ./.kb)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("search", help="describe a situation, get laws and examples")
    s.add_argument("query", nargs="*")
    s.add_argument("-k", type=int, default=10)
    s.add_argument("--lang")
    s.add_argument("--kind")
    s.add_argument("--law")
    s.add_argument("--doc")
    s.add_argument("--batch", help="file with one query per line ('-' for stdin); prints JSON lines")
    s.add_argument("--json", action="store_true")
    s.set_defaults(fn=cmd_search)
    s = sub.add_parser("law", help="one law in every language")
    s.add_argument("ref")
    s.add_argument("--json", action="store_true")
    s.set_defaults(fn=cmd_law)
    s = sub.add_parser("examples", help="worked examples under a law prefix")
    s.add_argument("ref", nargs="?")
    s.add_argument("--json", action="store_true")
    s.add_argument("--no-deals", dest="deals", action="store_false")
    s.set_defaults(fn=cmd_examples)
    s = sub.add_parser("refs", help="law references found in a text")
    s.add_argument("text", nargs="+")
    s.add_argument("--json", action="store_true")
    s.set_defaults(fn=cmd_refs)
    s = sub.add_parser("stats", help="what the knowledge base holds")
    s.add_argument("--json", action="store_true")
    s.set_defaults(fn=cmd_stats)
    s = sub.add_parser("eval", help="score a question file (dev.jsonl format)")
    s.add_argument("file")
    s.add_argument("--json", action="store_true")
    s.add_argument("-v", "--verbose", action="store_true")
    s.set_defaults(fn=cmd_eval)
    args = ap.parse_args(argv)
    from .store import KBError

    try:
        return args.fn(args)
    except KBError as e:
        print(str(e), file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
