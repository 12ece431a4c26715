"""Score ranked passages against gold law references (the rules of ../shared/eval/README.md).

Depths: *law* (same law number), *section* (same law and section letter; a bare-number tag only
counts for a bare-number gold), *exact* (the tag extends the gold, or the gold extends a tag
that has at least a section letter). A query is *cross-language* when no passage in its own
language is explicitly about the gold law number: the answer must come from another language.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from . import lawref

DEPTHS = ("law", "section", "exact")
KS = (1, 3, 5, 10)


def relevant(tag: str, gold: str, depth: str) -> bool:
    tn, ts, _, _ = lawref.parts(tag)
    gn, gs, _, _ = lawref.parts(gold)
    if depth == "law":
        return tn == gn
    if depth == "section":
        if tn != gn:
            return False
        if gs is None:
            return True
        return ts == gs
    return lawref.extends(tag, gold) or (lawref.depth(tag) >= 2 and lawref.extends(gold, tag))


def first_relevant(hits_laws: list[list[str]], gold: list[str], depth: str) -> int | None:
    """1-based rank of the first passage with a tag relevant to any gold ref."""
    for i, laws in enumerate(hits_laws, 1):
        if any(relevant(t, g, depth) for t in laws for g in gold):
            return i
    return None


@dataclass
class QueryResult:
    id: str
    query: str
    lang: str
    gold: list[str]
    cross: bool
    ranks: dict[str, int | None]
    top: list[list[str]] = field(default_factory=list)


@dataclass
class Report:
    results: list[QueryResult]

    def metrics(self, subset: Callable[[QueryResult], bool] = lambda r: True) -> dict[str, dict[str, float]]:
        rs = [r for r in self.results if subset(r)]
        out: dict[str, dict[str, float]] = {}
        for d in DEPTHS:
            m: dict[str, float] = {"n": len(rs)}
            for k in KS:
                m[f"R@{k}"] = sum(1 for r in rs if r.ranks[d] is not None and r.ranks[d] <= k) / len(rs) if rs else 0.0
            m["MRR@10"] = sum(1 / r.ranks[d] for r in rs if r.ranks[d] and r.ranks[d] <= 10) / len(rs) if rs else 0.0
            out[d] = m
        return out

    def groups(self) -> dict[str, Callable[[QueryResult], bool]]:
        g: dict[str, Callable[[QueryResult], bool]] = {"all": lambda r: True}
        for lang in sorted({r.lang for r in self.results}):
            g[f"lang={lang}"] = lambda r, lang=lang: r.lang == lang
        g["cross-language"] = lambda r: r.cross
        return g

    def table(self) -> str:
        rows = ["| subset | n | depth | R@1 | R@3 | R@5 | R@10 | MRR@10 |", "|---|---|---|---|---|---|---|---|"]
        for name, f in self.groups().items():
            ms = self.metrics(f)
            for d in DEPTHS:
                m = ms[d]
                if not m["n"]:
                    continue
                rows.append(f"| {name} | {int(m['n'])} | {d} | {m['R@1']:.2f} | {m['R@3']:.2f} | {m['R@5']:.2f} | "
                            f"{m['R@10']:.2f} | {m['MRR@10']:.2f} |")
        return "\n".join(rows)

    def to_dict(self) -> dict:
        return {name: self.metrics(f) for name, f in self.groups().items()}


def load_questions(path: Path) -> list[dict]:
    out = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        d = json.loads(line)
        if "query" not in d or "gold" not in d:
            raise ValueError(f"{path}:{n}: each line needs 'query' and 'gold'")
        d.setdefault("id", f"q{n}")
        d.setdefault("lang", "und")
        out.append(d)
    return out


def evaluate(kb, questions: list[dict], k: int = 10, **search_kw) -> Report:
    lang_laws = _laws_by_lang(kb)
    results = []
    for q in questions:
        res = kb.search(q["query"], k=k, **search_kw)
        top = [h.laws for h in res.hits]
        gold = [g for g in (lawref.canonical(x) for x in q["gold"]) if g]
        ranks = {d: first_relevant(top, gold, d) for d in DEPTHS}
        own = lang_laws.get(q["lang"], set())
        cross = not any(lawref.parts(g)[0] in own for g in gold)
        results.append(QueryResult(q["id"], q["query"], q["lang"], gold, cross, ranks, top))
    return Report(results)


def _laws_by_lang(kb) -> dict[str, set[int]]:
    conn = kb._conn(kb._gen)
    out: dict[str, set[int]] = {}
    for lang, law in conn.execute("SELECT p.lang, l.law FROM passage_laws l JOIN passages p ON p.rowid = l.rowid "
                                  "WHERE l.rel = 'law'"):
        out.setdefault(lang, set()).add(lawref.parts(law)[0])
    return out
