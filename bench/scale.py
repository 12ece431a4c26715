"""Scale benchmark: synthetic knowledge bases of 10,000 and 100,000 passages.

    .venv/bin/python bench/scale.py [--sizes 10000 100000] [--kb-dir DIR] [--queries FILE] [--json OUT]
                                    [--work DIR [--reuse]] [--skip-recall]

The passages are made from the default corpus, not copied: each one recombines 2-6 sentences of
different real passages of one language, shuffled, with its numbers and law addresses varied (law
numbers remapped per synthetic document, so tags spread over Laws 1-93), in synthetic documents of
500 passages. Their vectors are *derived from real embeddings*: each synthetic passage gets the
normalised mix of its source passages' real E5 vectors plus Gaussian noise (real vectors come from
the knowledge base given by --kb-dir, else ./.kb; with no built KB, random clustered unit vectors are
used and the table says so). Embedding 100k passages for real would take ~1.5 h at ~18 passages/s.
``--embed-subset N`` replaces the first N synthetic vectors with real embeddings of their text.

For each size, in fresh processes: build time (terms, SQLite/FTS5, FAISS, commit), peak RSS, size
on disk; then search latency (KnowledgeBase.search over the dev queries, first and repeated pass),
peak RSS, where the time goes; and for the vectors FAISS HNSW (M=32, efConstruction 80 and 200;
kb/store.py writes 200) against exact IndexFlatIP: recall@10 and latency for several efSearch.
The synthetic KBs carry the glossary's concept vectors like a real build (taken from --kb-dir).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

DEFAULT_QUERIES = ROOT.parent / "shared" / "eval" / "dev.jsonl"
DOC_SIZE = 500
_SENT_SPLIT = re.compile(r"(?<=[.;:!?])\s+(?=\S)")
_NUM = re.compile(r"\b\d{1,3}\b")


# --------------------------------------------------------------------------- synthetic text

def corpus_passages(corpus: Path | None = None):
    """The real passages of the corpus (load, clean, segment, tag; no model)."""
    from ingest.catalog import load_catalog
    from ingest.pipeline import process_corpus
    from kb.store import default_corpus_dir

    corpus = Path(corpus or default_corpus_dir())
    catalog, _ = load_catalog(corpus)
    return [p for _path, ps, _rep, _raw in process_corpus(corpus, catalog) for p in ps]


def sentences_by_lang(passages) -> dict[str, list[tuple[int, str]]]:
    """(source passage index, sentence) per language; deal-diagram lines left out."""
    out: dict[str, list[tuple[int, str]]] = {}
    for i, p in enumerate(passages):
        body = " ".join(ln.strip() for ln in p.text.split("\n") if ln.strip() and ln.lstrip()[:1] not in "♠♥♦♣")
        for s in _SENT_SPLIT.split(body):
            if len(s) >= 25:
                out.setdefault(p.lang, []).append((i, s))
    return out


def _remap_law(law: str, n: int) -> str | None:
    from kb import lawref

    _, sec, dig, sub = lawref.parts(law)
    return lawref.canonical(f"{n}{sec or ''}{dig or ''}{sub or ''}")


def synth_passages(src, n: int, seed: int = 7):
    """``n`` synthetic passages (and, for each, the indices of the real passages it was made from)."""
    from ingest.model import Passage

    rng = random.Random(seed)
    sents = sentences_by_lang(src)
    langs = [p.lang for p in src if p.lang in sents]
    kinds = [p.kind for p in src]
    out, parents = [], []
    for i in range(n):
        doc_no = i // DOC_SIZE
        drng = random.Random(seed * 1_000_003 + doc_no)
        shift = drng.randrange(0, 93)  # this document's law numbering: real laws remapped by a shift
        lang = rng.choice(langs)
        pool = sents[lang]
        k = rng.randint(2, 6)
        picked = [pool[rng.randrange(len(pool))] for _ in range(k)]
        rng.shuffle(picked)
        text = " ".join(s for _, s in picked)
        text = _NUM.sub(lambda m: str(rng.randint(1, 99)) if rng.random() < 0.5 else m.group(0), text)
        base = src[picked[0][0]]
        laws = []
        for law in base.laws[:2]:
            num = (int(re.match(r"\d+", law).group(0)) + shift - 1) % 93 + 1
            mapped = _remap_law(law, num)
            if mapped and mapped not in laws:
                laws.append(mapped)
        cites = [c for c in (_remap_law(x, rng.randint(1, 93)) for x in base.cites[:2]) if c and c not in laws]
        kind = base.kind if rng.random() < 0.7 else rng.choice(kinds)
        title = (f"Law {laws[0]} · " if laws else "") + f"synthetic {doc_no:04d}"
        out.append(Passage(id=f"syn{i:07d}", doc=f"synthetic-{doc_no:04d}.txt", page=1 + (i % DOC_SIZE) // 4,
                           page_end=None, lang=lang, kind=kind, title=title, text=text, laws=laws, cites=cites,
                           heading=laws[0] if laws else None,
                           example_no=str(1 + i % 40) if kind == "example" else None))
        parents.append([j for j, _ in picked])
    return out, parents


def real_vectors(kb_dir: Path | None, src) -> np.ndarray | None:
    """The real E5 vectors of the corpus passages, read from a built knowledge base (None if none)."""
    from kb.build import embed_text, vec_key
    from kb.store import Generation, current_generation, default_kb_dir

    gen_path = current_generation(Path(kb_dir or default_kb_dir()))
    if gen_path is None:
        return None
    gen = Generation(gen_path)
    model = gen.manifest.get("model") or ""
    if not model:
        return None
    keys = [vec_key(model, embed_text(p)) for p in src]
    found = {k: np.frombuffer(b, np.float32) for k, b in gen.conn.execute(
        f"SELECT vec_key, vec FROM vectors WHERE vec_key IN ({','.join('?' * len(keys))})", keys)}
    if len(found) < 0.9 * len(set(keys)):
        return None
    dim = len(next(iter(found.values())))
    out = np.stack([found.get(k, np.zeros(dim, np.float32)) for k in keys])
    return out


def synth_vectors(src_vecs: np.ndarray | None, parents, seed: int = 11, dim: int = 384,
                  noise: float = 0.35) -> tuple[np.ndarray, str]:
    """One unit vector per synthetic passage: mix of its sources' real vectors + noise (or clustered random)."""
    rng = np.random.default_rng(seed)
    n = len(parents)
    if src_vecs is None:
        centers = rng.standard_normal((256, dim)).astype(np.float32)
        centers /= np.linalg.norm(centers, axis=1, keepdims=True)
        v = centers[rng.integers(0, 256, n)] + 0.6 * rng.standard_normal((n, dim)).astype(np.float32) / np.sqrt(dim)
        how = "random clustered unit vectors (256 centres)"
    else:
        dim = src_vecs.shape[1]
        v = np.zeros((n, dim), np.float32)
        for i, ps in enumerate(parents):
            w = rng.dirichlet(np.ones(len(ps))).astype(np.float32)
            v[i] = w @ src_vecs[ps]
        # E5 vectors share a large common component (cosines 0.7-0.9): perturb around it, relative to the spread
        v += noise * rng.standard_normal((n, dim)).astype(np.float32) * float(src_vecs.std(0).mean())
        how = "mixes of the source passages' real E5 vectors + noise"
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    return v.astype(np.float32), how


# --------------------------------------------------------------------------- build (child process)

def concept_vectors(src_kb: Path | None, model: str):
    """The glossary's concept vectors, as a real build writes them (kb/build.py): taken from the source
    KB when it has them, else embedded. Without them every search embeds ~4 texts instead of one."""
    from kb.build import _concept_vectors
    from kb.embed import LazyEmbedder
    from kb.store import Generation, current_generation, default_kb_dir

    gen_path = current_generation(Path(src_kb or default_kb_dir()))
    prev = Generation(gen_path) if gen_path else None
    # the model is loaded only if some rendering is not in the source KB
    return _concept_vectors(LazyEmbedder(), model, prev if prev and prev.manifest.get("model") == model else None)


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _dir_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in Path(path).rglob("*") if f.is_file()) / 1e6


def build_synthetic(n: int, kb_dir: Path, src_kb: Path | None, embed_subset: int = 0,
                    index_type: str = "auto") -> dict:
    from kb.build import vec_key
    from kb.embed import default_model_name
    from kb.lexical import passage_terms
    from kb.store import DocumentRow, GenerationWriter

    t0 = time.perf_counter()
    src = corpus_passages()
    passages, parents = synth_passages(src, n)
    src_vecs = real_vectors(src_kb, src)
    vectors, how = synth_vectors(src_vecs, parents)
    if embed_subset:
        from kb.build import embed_text
        from kb.embed import get_embedder

        m = min(embed_subset, n)
        vectors[:m] = get_embedder().encode_passages([embed_text(p) for p in passages[:m]])
        how += f"; the first {m} embedded for real"
    t_gen = time.perf_counter() - t0

    timings: dict[str, float] = {}
    t1 = time.perf_counter()
    terms = [passage_terms(p.title, p.text, p.lang, p.laws) for p in passages]
    timings["terms"] = time.perf_counter() - t1
    t2 = time.perf_counter()
    model = default_model_name()
    writer = GenerationWriter(kb_dir)
    try:
        docs: dict[str, list] = {}
        for p in passages:
            docs.setdefault(p.doc, []).append(p)
        for name, ps in docs.items():
            writer.add_document(DocumentRow(name=name, path=name, sha256=name, title=name, author="bench", year=None,
                                            languages=sorted({p.lang for p in ps}), laws_edition=2017,
                                            doc_kind="synthetic", source="bench/scale.py", pages=ps[-1].page,
                                            passages=len(ps), status="ok", message=""), {"path": name})
        keys = [vec_key(model, f"{p.id}\n{p.text}") for p in passages]
        rowids = np.array([writer.add_passage(p, t, k) for p, t, k in zip(passages, terms, keys, strict=True)],
                          dtype=np.int64)
        writer.add_vectors(list(zip(keys, vectors, strict=True)))
        concept_rows, concept_vecs = concept_vectors(src_kb, model)
        writer.add_vectors(concept_vecs)
        writer.add_concept_vectors(concept_rows)
        timings["sqlite+fts5"] = time.perf_counter() - t2
        t3 = time.perf_counter()
        kind = writer.write_index(rowids, vectors, index_type)
        timings[f"faiss ({kind})"] = time.perf_counter() - t3
        t4 = time.perf_counter()
        gen = writer.commit({"model": model, "dim": int(vectors.shape[1]), "index": kind, "pipeline": "synthetic",
                             "built": time.strftime("%Y-%m-%dT%H:%M:%S"), "corpus": "synthetic",
                             "files": {}, "documents": {}, "counts": {"documents": len(docs), "passages": n},
                             "problems": []})
        timings["commit"] = time.perf_counter() - t4
    except BaseException:
        writer.abort()
        raise
    np.save(kb_dir / "bench-vectors.npy", vectors)  # for the recall check (not part of the KB)
    return {"n": n, "generate_s": t_gen, "build_s": sum(timings.values()), "timings": timings, "index": kind,
            "vectors": how, "rss_mb": _rss_mb(), "disk_mb": _dir_mb(gen), "gen": str(gen),
            "sqlite_mb": (gen / "kb.sqlite").stat().st_size / 1e6,
            "faiss_mb": (gen / "vectors.faiss").stat().st_size / 1e6}


# --------------------------------------------------------------------------- search (child process)

def load_queries(path: Path) -> list[str]:
    return [json.loads(line)["query"] for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


PROFILED = {  # function name -> label, for the breakdown of a search
    "encode_queries": "query embedding", "lexical_candidates": "lexical BM25", "dense_candidates": "FAISS",
    "detect_query_lang": "language detection", "_law_exists": "law-exists SQL", "_ref_rows": "ref rows SQL",
    "_tags": "tags SQL", "_rows": "rows SQL", "_also_in": "also-in SQL", "snippet": "snippets",
    "rank": "rank+diversify", "query_word_set": "query word set", "expand": "glossary expand",
    "query_words": "query words (stemming)", "query_concepts": "query concepts", "parse_refs": "law refs",
}


def breakdown(kb, queries: list[str], k: int = 10) -> dict[str, float]:
    """ms per query spent in each part of KnowledgeBase.search (cProfile cumulative times)."""
    import cProfile
    import pstats

    pr = cProfile.Profile()
    pr.enable()
    t = time.perf_counter()
    for q in queries:
        kb.search(q, k=k)
    total = time.perf_counter() - t
    pr.disable()
    st = pstats.Stats(pr)
    out: dict[str, float] = {"total (profiled)": 1000 * total / len(queries)}
    for (_file, _line, fn), (_cc, _nc, _tt, ct, _callers) in st.stats.items():
        if fn in PROFILED and ("/kb/" in _file or "\\kb\\" in _file):
            label = PROFILED[fn]
            out[label] = out.get(label, 0.0) + 1000 * ct / len(queries)
    return out


def pct(xs, q) -> float:
    return float(np.percentile(np.asarray(xs) * 1000, q))


def search_bench(kb_dir: Path, queries: list[str], k: int = 10) -> dict:
    from kb import KnowledgeBase

    t0 = time.perf_counter()
    kb = KnowledgeBase.open(kb_dir)
    t_open = time.perf_counter() - t0
    t1 = time.perf_counter()
    emb = kb.embedder()
    t_model = time.perf_counter() - t1
    kb.warm_up()
    passes = []
    for _ in range(2):
        ts = []
        for q in queries:
            t = time.perf_counter()
            kb.search(q, k=k)
            ts.append(time.perf_counter() - t)
        passes.append(ts)
    cache = getattr(emb, "_cache", None)
    if cache is not None:
        cache.clear()
    bd = breakdown(kb, queries, k)
    return {"open_s": t_open, "model_s": t_model, "query_encoder": getattr(emb, "query_encoder", "?"),
            "first": {"p50": pct(passes[0], 50), "p95": pct(passes[0], 95)},
            "repeat": {"p50": pct(passes[1], 50), "p95": pct(passes[1], 95)},
            "breakdown_ms": bd, "law_pages": law_bench(kb), "rss_mb": _rss_mb()}


def law_bench(kb, n: int = 3) -> dict:
    """A law page (every passage of the law, per language, repeated texts found) and its worked examples, for
    the ``n`` law numbers with the most passages: the largest pages a director can open."""
    conn = kb._conn(kb._gen)
    count: dict[str, int] = {}
    for (law,) in conn.execute("SELECT law FROM passage_laws WHERE rel = 'law'"):
        number = re.match(r"\d+", law)
        if number:
            count[number.group(0)] = count.get(number.group(0), 0) + 1
    out = []
    for number in sorted(count, key=lambda x: -count[x])[:n]:
        t = time.perf_counter()
        view = kb.law(number)
        t_law = time.perf_counter() - t
        t = time.perf_counter()
        examples = kb.examples(number)
        t_ex = time.perf_counter() - t
        shown = sum(len(v) for v in view.by_lang.values())
        out.append({"law": number, "tagged": count[number], "shown": shown,
                    "copies": sum(len(v) for v in view.copies.values()), "law_ms": t_law * 1000,
                    "examples": len(examples), "examples_ms": t_ex * 1000})
    return {"pages": out}


def search_texts(kb_dir: Path, queries: list[str]) -> list[str]:
    """Every text KnowledgeBase.search embeds for the queries (recorded, so it follows search.py)."""
    from kb import KnowledgeBase

    kb = KnowledgeBase.open(kb_dir)
    emb = kb.embedder()
    seen: list[str] = []

    class Rec:
        name, dim = emb.name, emb.dim

        def encode_queries(self, texts):
            seen.extend(texts)
            return emb.encode_queries(texts)

    kb._embedder = Rec()
    for q in queries:
        kb.search(q)
    return seen


def recall_bench(kb_dir: Path, queries: list[str], efs=(64, 128, 256, 512), n_synth: int = 200) -> dict:
    """HNSW (as kb/store.py builds it, and with efConstruction 200) vs exact search on the same vectors:
    recall@10 and recall@100 (a search asks FAISS for 100 candidates), latency per query vector."""
    import faiss

    from kb.embed import get_embedder

    vecs = np.load(kb_dir / "bench-vectors.npy")
    n, dim = vecs.shape
    texts = search_texts(kb_dir, queries)
    rng = np.random.default_rng(5)
    synth = vecs[rng.integers(0, n, n_synth)] + 0.05 * rng.standard_normal((n_synth, dim)).astype(np.float32)
    synth /= np.linalg.norm(synth, axis=1, keepdims=True)
    qv = np.ascontiguousarray(np.concatenate([get_embedder().encode_queries(texts), synth]).astype(np.float32))
    faiss.omp_set_num_threads(1)  # one query at a time, as a search does
    flat = faiss.IndexFlatIP(dim)
    flat.add(vecs)
    t = time.perf_counter()
    for row in qv:
        flat.search(row[None], 100)
    flat_ms = 1000 * (time.perf_counter() - t) / len(qv)
    exact_d, exact = flat.search(qv, 100)
    gap = float(np.median(exact_d[:, 0] - exact_d[:, 9]))
    out = {"n": n, "flat_ms": flat_ms, "queries": len(qv), "dev_texts": len(texts), "top1_top10_gap": gap,
           "hnsw": [], "hnsw_build_s": {}}
    faiss.omp_set_num_threads(len(os.sched_getaffinity(0)))
    for efc in (80, 200):
        t = time.perf_counter()
        hnsw = faiss.IndexHNSWFlat(dim, 32, faiss.METRIC_INNER_PRODUCT)
        hnsw.hnsw.efConstruction = efc
        hnsw.add(vecs)
        out["hnsw_build_s"][efc] = time.perf_counter() - t
        faiss.omp_set_num_threads(1)
        for ef in efs:
            hnsw.hnsw.efSearch = ef
            t = time.perf_counter()
            for row in qv:
                hnsw.search(row[None], 100)
            ms = 1000 * (time.perf_counter() - t) / len(qv)
            _, got = hnsw.search(qv, 100)
            r10 = np.mean([len(set(a[:10]) & set(b[:10])) / 10 for a, b in zip(got, exact, strict=True)])
            r10d = np.mean([len(set(a[:10]) & set(b[:10])) / 10
                            for a, b in zip(got[:len(texts)], exact[:len(texts)], strict=True)])
            r100 = np.mean([len(set(a) & set(b)) / 100 for a, b in zip(got, exact, strict=True)])
            out["hnsw"].append({"efConstruction": efc, "efSearch": ef, "recall@10": float(r10),
                                "recall@10 (dev queries)": float(r10d), "recall@100": float(r100), "ms": ms})
        faiss.omp_set_num_threads(len(os.sched_getaffinity(0)))
    return out


# --------------------------------------------------------------------------- driver

def _child(args) -> int:
    if args.child == "build":
        res = build_synthetic(args.n, Path(args.out), args.kb_dir, args.embed_subset)
    elif args.child == "search":
        res = search_bench(Path(args.out), load_queries(args.queries))
    else:
        res = recall_bench(Path(args.out), load_queries(args.queries))
    print("RESULT " + json.dumps(res))
    return 0


def _run_child(kind: str, n: int, out: Path, args) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", kind, "--n", str(n), "--out", str(out),
           "--queries", str(args.queries), "--embed-subset", str(args.embed_subset)]
    if args.kb_dir:
        cmd += ["--kb-dir", str(args.kb_dir)]
    return run_result(cmd, f"{kind} {n}")


def run_result(cmd: list[str], what: str, extra_env: dict[str, str] | None = None) -> dict:
    """Run a benchmark child in a fresh process; its JSON from the line "RESULT {...}", plus wall time."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TOKENIZERS_PARALLELISM": "false", **(extra_env or {})}
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    wall = time.perf_counter() - t
    line = next((ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")), None)
    if p.returncode or line is None:
        raise RuntimeError(f"{what} failed ({p.returncode}):\n{p.stderr[-3000:]}")
    res = json.loads(line[7:])
    res["wall_s"] = wall
    return res


def run(sizes: list[int], args) -> list[dict]:
    """Build, search and recall per size. With ``--work DIR`` the synthetic KBs are kept in DIR/<n>
    (and their build/recall results beside them); ``--reuse`` then skips the parts already there."""
    results = []
    for n in sizes:
        keep = args.work is not None
        work = Path(args.work) / str(n) if keep else Path(tempfile.mkdtemp(prefix=f"kb-scale-{n}-"))
        try:
            b = _load(work / "build.json") if args.reuse else None
            if b is None:
                shutil.rmtree(work, ignore_errors=True)
                work.mkdir(parents=True, exist_ok=True)
                print(f"[scale] {n}: building …", file=sys.stderr, flush=True)
                b = _run_child("build", n, work, args)
                _save(work / "build.json", b, keep)
            print(f"[scale] {n}: built in {b['build_s']:.1f}s; searching …", file=sys.stderr, flush=True)
            s = _run_child("search", n, work, args)
            r = _load(work / "recall.json") if args.reuse else None
            if r is None and not args.skip_recall:
                print(f"[scale] {n}: recall …", file=sys.stderr, flush=True)
                r = _run_child("recall", n, work, args)
                _save(work / "recall.json", r, keep)
            results.append({"n": n, "build": b, "search": s, "recall": r})
        finally:
            if not keep:
                shutil.rmtree(work, ignore_errors=True)
    return results


def _load(path: Path) -> dict | None:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def _save(path: Path, res: dict, keep: bool) -> None:
    if keep:
        path.write_text(json.dumps(res, indent=2), encoding="utf-8")


def table(results: list[dict]) -> str:
    rows = ["| measure | " + " | ".join(f"{r['n']:,} passages" for r in results) + " | target |",
            "|---|" + "---|" * len(results) + "---|"]

    def row(label, fn, target=""):
        rows.append(f"| {label} | " + " | ".join(fn(r) for r in results) + f" | {target} |")

    row("vectors", lambda r: r["build"]["vectors"])
    row("build (terms + SQLite/FTS5 + FAISS + commit)", lambda r: f"{r['build']['build_s']:.1f} s "
        f"({', '.join(f'{k} {v:.1f}' for k, v in r['build']['timings'].items())})")
    row("FAISS index written", lambda r: r["build"]["index"])
    row("peak RSS, build", lambda r: f"{r['build']['rss_mb']:.0f} MB", "≤ 1.5 GB")
    row("on disk (SQLite + FAISS)", lambda r: f"{r['build']['disk_mb']:.0f} MB (SQLite {r['build']['sqlite_mb']:.0f}, "
        f"FAISS {r['build']['faiss_mb']:.0f})")
    row("open KB + query encoder", lambda r: f"{r['search']['open_s'] * 1000:.0f} ms + {r['search']['model_s'] * 1000:.0f} ms "
        f"({r['search']['query_encoder']})")
    row("search p50 / p95, first pass", lambda r: f"{r['search']['first']['p50']:.1f} / {r['search']['first']['p95']:.1f} ms",
        "p50 ≤ 50 ms at 100k")
    row("search p50 / p95, repeated queries", lambda r: f"{r['search']['repeat']['p50']:.1f} / "
        f"{r['search']['repeat']['p95']:.1f} ms")
    row("peak RSS, search", lambda r: f"{r['search']['rss_mb']:.0f} MB", "≤ 1.5 GB")
    if all(r["search"].get("law_pages") for r in results):
        row("law page · its worked examples, the 3 largest laws", lambda r: "; ".join(
            f"Law {p['law']} ({p['tagged']:,} tags, {p['shown']:,} shown, {p['copies']:,} repeats): "
            f"{p['law_ms']:.0f} ms · {p['examples']:,} examples {p['examples_ms']:.0f} ms"
            for p in r["search"]["law_pages"]["pages"]))
    labels = []
    for r in results:
        for k in r["search"]["breakdown_ms"]:
            if k not in labels:
                labels.append(k)
    for k in labels:
        row(f"  ms/query in {k}", lambda r, k=k: f"{r['search']['breakdown_ms'].get(k, 0.0):.2f}")
    if not all(r["recall"] for r in results):
        return "\n".join(rows)
    row("exact IndexFlatIP, one query vector, top 100", lambda r: f"{r['recall']['flat_ms']:.2f} ms")
    row("median cosine gap, exact 1st to 10th neighbour", lambda r: f"{r['recall']['top1_top10_gap']:.4f}")
    row("HNSW build M=32, efConstruction 80 / 200",
        lambda r: " / ".join(f"{v:.1f} s" for v in r["recall"]["hnsw_build_s"].values()))
    for i, h in enumerate(results[0]["recall"]["hnsw"]):
        row(f"HNSW efC={h['efConstruction']} efSearch={h['efSearch']}: recall@10 all / dev queries, recall@100, ms",
            lambda r, i=i: f"{r['recall']['hnsw'][i]['recall@10']:.3f} / "
                           f"{r['recall']['hnsw'][i]['recall@10 (dev queries)']:.3f}, "
                           f"{r['recall']['hnsw'][i]['recall@100']:.3f}, {r['recall']['hnsw'][i]['ms']:.2f} ms")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--kb-dir", type=Path, default=None, help="built KB whose real vectors seed the synthetic ones")
    ap.add_argument("--queries", type=Path, default=DEFAULT_QUERIES)
    ap.add_argument("--embed-subset", type=int, default=0)
    ap.add_argument("--json", type=Path, default=None, help="also write the results as JSON here")
    ap.add_argument("--work", type=Path, default=None, help="keep the synthetic KBs in WORK/<n> (default: temp)")
    ap.add_argument("--reuse", action="store_true", help="with --work: reuse the KBs (and recall results) there")
    ap.add_argument("--skip-recall", action="store_true", help="leave out the HNSW recall check (slow)")
    ap.add_argument("--child", choices=["build", "search", "recall"], help=argparse.SUPPRESS)
    ap.add_argument("--n", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return _child(args)
    results = run(args.sizes, args)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")
    print(f"cores: {len(os.sched_getaffinity(0))} · load average: {os.getloadavg()[0]:.1f}\n")
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
