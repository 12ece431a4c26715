"""Build (or refresh) the knowledge base from a corpus folder: the embed → index end of the ingest.

Incremental by content: a file whose bytes are unchanged reuses its passages from the live
generation; a passage whose text is unchanged reuses its vector; removed files disappear;
two files with the same bytes are indexed once. The result is written as a new generation and
swapped in atomically (see store.py).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from ingest.catalog import load_catalog
from ingest.load import sha256_file
from ingest.model import FileReport, Passage
from ingest.pipeline import corpus_files, display_path, name_problem, process_file
from ingest.tag import complete_quotes, infer_tags

from . import lawref
from .conceptvec import concept_texts
from .glossary import default_glossary
from .lexical import passage_terms
from .precedents import load_questions, precedent_key, question_text, shipped_vectors
from .store import DocumentRow, Generation, GenerationWriter, current_generation, row_to_passage
from .textnorm import prose

PIPELINE_VERSION = "2026-11-22.3"  # bump when segmentation/tagging changes: forces re-ingest of every file

Progress = Callable[[str, int, int, str], None]


@dataclass
class BuildResult:
    generation: Path | None
    reports: list[FileReport]
    passages: int = 0
    embedded: int = 0
    reused_vectors: int = 0
    timings: dict[str, float] = field(default_factory=dict)
    model: str = ""

    @property
    def failed(self) -> list[FileReport]:
        return [r for r in self.reports if r.status == "failed"]


def embed_text(p: Passage, expand: bool = False) -> str:
    """What the model sees: title and prose, without deal diagram lines (noise to a language model).

    ``expand`` appends the passage's glossary concepts in the other languages (document-side
    expansion). Measured on dev + tune (84 questions): no better (section R@5 63 vs 64 questions,
    law R@5 70 vs 73) and a third more tokens to embed, so off by default (bench/ablation.py).
    """
    text = f"{p.title}\n{prose(p.text)}"[:1600]
    if expand:
        from .glossary import default_glossary

        others = [lg for lg in ("it", "en", "el") if lg != p.lang]
        text += "\n" + default_glossary().expand(text, others)[:400]
    return text


def vec_key(model: str, text: str) -> str:
    return hashlib.sha1(f"{model}\x00{text}".encode()).hexdigest()


def _noop(stage: str, done: int, total: int, detail: str) -> None:
    pass


def build(corpus: Path, kb_dir: Path, embedder=None, progress: Progress | None = None,
          embed: bool = True, index_type: str = "auto", doc_expansion: bool = False,
          strict: bool = False) -> BuildResult:
    """Ingest `corpus` into a new generation under `kb_dir`. Bad files are reported, never fatal.

    With `strict`, a failed file stops the build after loading, before anything is written: the
    result has `generation=None` and the knowledge base is untouched (`python -m ingest --strict`).

    One build at a time per knowledge base, across processes (a CLI ingest and an app upload): the
    second waits for the first and then reads the corpus, so neither build's documents are lost.
    """
    progress = progress or _noop
    with build_lock(Path(kb_dir), progress):
        return _build(corpus, kb_dir, embedder, progress, embed, index_type, doc_expansion, strict)


@contextmanager
def build_lock(kb_dir: Path, progress: Progress = _noop) -> Iterator[None]:
    """An exclusive lock on `kb_dir/.build.lock` (released by the OS if the process dies)."""
    kb_dir.mkdir(parents=True, exist_ok=True)
    with open(kb_dir / ".build.lock", "a+b") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            progress("wait", 0, 1, "another build of this knowledge base is running: waiting for it")
            fcntl.flock(f, fcntl.LOCK_EX)
            progress("wait", 1, 1, "")
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _build(corpus: Path, kb_dir: Path, embedder, progress: Progress, embed: bool, index_type: str,
           doc_expansion: bool, strict: bool) -> BuildResult:
    t0 = time.perf_counter()
    timings: dict[str, float] = {}
    corpus, kb_dir = Path(corpus), Path(kb_dir)
    catalog, catalog_problems = load_catalog(corpus)
    prev = _previous(kb_dir)
    if embed and embedder is None:  # loaded only if something needs embedding (see LazyEmbedder)
        from .embed import LazyEmbedder

        embedder = LazyEmbedder(progress=progress)
    model_name = embedder.name if embed else ""
    if prev and embed and prev.manifest.get("model") not in ("", model_name):
        prev_vectors_ok = False  # another model built it: its vectors can't be mixed with ours
    else:
        prev_vectors_ok = True

    # ---- load, clean, segment, tag (or reuse unchanged documents)
    t1 = time.perf_counter()
    files = corpus_files(corpus)
    reports: list[FileReport] = []
    docs: list[tuple[DocumentRow, FileReport, list[Passage]]] = []
    by_hash: dict[str, str] = {}
    by_name: dict[str, str] = {}  # documents are identified by file name (passage ids, catalog, reuse)
    for i, path in enumerate(files):
        rel = str(path.relative_to(corpus))
        if problem := name_problem(rel):  # not UTF-8: can't be stored, hashed into ids or printed
            rel = display_path(rel)
            progress("load", i, len(files), rel)
            reports.append(FileReport(rel, "failed", problem))
            continue
        progress("load", i, len(files), rel)
        try:
            digest = sha256_file(path)
        except OSError as e:
            reports.append(FileReport(rel, "failed", f"cannot read file: {e.strerror or e}"))
            continue
        if digest in by_hash:
            reports.append(FileReport(rel, "duplicate", f"same content as {by_hash[digest]}: indexed once"))
            continue
        if path.name in by_name:  # a/x.txt and b/x.txt: the second used to crash the whole build
            reports.append(FileReport(rel, "failed", f"same file name as {by_name[path.name]} (documents are "
                                                     "identified by file name): rename one of them"))
            continue
        entry = catalog.get(path.name)
        reused = _reuse(prev, path.name, digest)
        if reused is not None:
            row, report, passages = reused
            report.status, report.message = "unchanged", "unchanged since last ingest"
            if entry is not None:
                row = _row(path.name, rel, digest, entry, report)
        else:
            passages, report, _raw = process_file(path, corpus, entry)
            if report.status != "ok":
                reports.append(report)
                continue
            row = _row(path.name, rel, digest, entry, report)
        by_hash[digest] = by_name[path.name] = rel
        reports.append(report)
        docs.append((row, report, passages))
    progress("load", len(files), len(files), "")
    timings["load+segment+tag"] = time.perf_counter() - t1
    if strict and any(r.status == "failed" for r in reports):
        timings["total"] = time.perf_counter() - t0
        return BuildResult(None, reports, timings=timings, model=model_name)

    passages = [p for _, _, ps in docs for p in ps]
    complete_quotes(passages)  # across documents: a quote's full address may stand in another file
    writer = GenerationWriter(kb_dir)
    try:
        vectors = None
        embedded = reused_count = 0
        if embed and passages:
            t2 = time.perf_counter()
            texts = [embed_text(p, doc_expansion) for p in passages]
            keys = [vec_key(model_name, t) for t in texts]
            cache = _prev_vectors(prev, keys) if prev_vectors_ok else {}
            missing = [i for i, k in enumerate(keys) if k not in cache]
            reused_count = len(passages) - len(missing)
            # an unchanged build takes the width from its reused vectors and never loads the model
            dim = len(next(iter(cache.values()))) if cache and not missing else embedder.dim
            vectors = np.zeros((len(passages), dim), dtype=np.float32)
            for i, k in enumerate(keys):
                if k in cache:
                    vectors[i] = cache[k]
            if missing:
                def _p(done: int, total: int) -> None:
                    progress("embed", done, total, f"{done}/{total} passages")

                _p(0, len(missing))
                new = embedder.encode_passages([texts[i] for i in missing], progress=_p)
                vectors[missing] = new
                embedded = len(missing)
            progress("embed", len(missing), len(missing), "done")
            timings["embed"] = time.perf_counter() - t2
            t3 = time.perf_counter()
            # inferred tags are recomputed every build: neighbours change when documents do
            for p in passages:
                p.inferred = {}
            scopes = {row.name: lawref.scope_of(row.title) for row, _, _ in docs}
            infer_tags(passages, vectors, scopes=scopes, concept_votes=default_glossary().law_votes)
            timings["infer tags"] = time.perf_counter() - t3
            t5 = time.perf_counter()
            concept_rows, concept_vecs = _concept_vectors(embedder, model_name, prev if prev_vectors_ok else None)
            timings["concept vectors"] = time.perf_counter() - t5
            t6 = time.perf_counter()
            precedent_rows, precedent_vecs = _precedent_vectors(embedder, model_name,
                                                                prev if prev_vectors_ok else None, progress)
            timings["precedents"] = time.perf_counter() - t6
        else:
            keys = [""] * len(passages)

        t4 = time.perf_counter()
        progress("index", 0, len(passages), "writing the store")
        for row, report, _ in docs:
            writer.add_document(row, asdict(report))
        rowids = np.array([writer.add_passage(p, passage_terms(p.title, p.text, p.lang, p.laws), k)
                           for p, k in zip(passages, keys, strict=True)], dtype=np.int64)
        index_kind = "none"
        if vectors is not None:
            writer.add_vectors(list(zip(keys, vectors, strict=True)))
            writer.add_vectors(concept_vecs)
            writer.add_concept_vectors(concept_rows)
            writer.add_vectors(precedent_vecs)
            writer.add_precedents(precedent_rows)
            index_kind = writer.write_index(rowids, vectors, index_type)
        manifest = {
            "model": model_name, "dim": int(vectors.shape[1]) if vectors is not None else 0,
            "index": index_kind, "pipeline": PIPELINE_VERSION, "built": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "corpus": str(corpus.resolve()),
            "files": {r.path: {"status": r.status, "passages": r.passages} for r in reports},
            "documents": {row.name: row.sha256 for row, _, _ in docs},
            "counts": {"documents": len(docs), "passages": len(passages)},
            "problems": catalog_problems,
        }
        gen = writer.commit(manifest)
        progress("index", len(passages), len(passages), "done")
        timings["index"] = time.perf_counter() - t4
    except BaseException:
        writer.abort()
        raise
    if getattr(embedder, "loaded", False):
        timings["model"] = embedder.load_s
    timings["total"] = time.perf_counter() - t0
    return BuildResult(gen, reports, len(passages), embedded, reused_count, timings, model_name)


def _query_vectors(embedder, keys: list[str], text_of: Callable[[int], str], prev: Generation | None,
                   progress: Callable[[int, int], None] | None = None,
                   known: dict[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """Vectors by key: the previous generation's and those in `known` reused, the rest embedded with the
    query encoder (``text_of(i)`` for key i, asked only for those), in chunks that `progress` follows."""
    cache = {k: known[k] for k in keys if k in known} if known else {}
    cache.update(_prev_vectors(prev, [k for k in keys if k not in cache]))
    missing = [i for i, k in enumerate(keys) if k not in cache]
    for a in range(0, len(missing), 64):
        chunk = missing[a:a + 64]
        new = embedder.encode_queries([text_of(i) for i in chunk])
        cache.update({keys[i]: v for i, v in zip(chunk, new, strict=True)})
        if progress is not None:
            progress(a + len(chunk), len(missing))
    return cache


def _concept_vectors(embedder, model_name: str, prev: Generation | None):
    """The glossary renderings embedded with the query encoder (see conceptvec.py); unchanged ones reused."""
    items = concept_texts(default_glossary())
    keys = [vec_key(model_name, f"query\x00{text}") for _, _, text in items]
    cache = _query_vectors(embedder, keys, lambda i: items[i][2], prev)
    rows = [(c, lg, k) for (c, lg, _), k in zip(items, keys, strict=True)]
    return rows, [(k, cache[k]) for k in dict.fromkeys(keys)]


def _precedent_vectors(embedder, model_name: str, prev: Generation | None, progress: Progress):
    """The precedent questions (kb/precedents.py), embedded as a search reads them (question_text).

    Keyed by the model and the question as written: reading 840 questions again costs a second, which an
    unchanged re-ingest should not pay (a change in how a search reads them leaves their vectors as they
    were: a precedent's vote does not hang on such details)."""
    items = load_questions()

    def _p(done: int, total: int) -> None:
        progress("precedents", done, total, f"{done}/{total} questions")

    keys = [precedent_key(model_name, p) for p in items]
    cache = _query_vectors(embedder, keys, lambda i: question_text(items[i].text), prev, _p, shipped_vectors())
    rows = [(p.id, list(p.laws), k) for p, k in zip(items, keys, strict=True)]
    return rows, [(k, cache[k]) for k in dict.fromkeys(keys)]


def _previous(kb_dir: Path) -> Generation | None:
    path = current_generation(kb_dir)
    if path is None:
        return None
    try:
        return Generation(path)
    except Exception:  # unreadable or other version: rebuild everything
        return None


def _reuse(prev: Generation | None, name: str, digest: str) -> tuple[DocumentRow, FileReport, list[Passage]] | None:
    if prev is None or prev.manifest.get("pipeline") != PIPELINE_VERSION:
        return None
    row = prev.conn.execute("SELECT * FROM documents WHERE name = ? AND sha256 = ?", (name, digest)).fetchone()
    if row is None:
        return None
    rep = json.loads(row["report"])
    report = FileReport(**rep)
    passages = [row_to_passage(r) for r in prev.conn.execute(
        "SELECT * FROM passages WHERE doc = ? ORDER BY rowid", (name,))]
    doc = DocumentRow(name=row["name"], path=row["path"], sha256=row["sha256"], title=row["title"],
                      author=row["author"], year=row["year"], languages=json.loads(row["languages"]),
                      laws_edition=row["laws_edition"], doc_kind=row["doc_kind"], source=row["source"],
                      pages=row["pages"], passages=row["passages"], status="ok", message="")
    return doc, report, passages


def _prev_vectors(prev: Generation | None, keys: list[str]) -> dict[str, np.ndarray]:
    if prev is None:
        return {}
    out: dict[str, np.ndarray] = {}
    uniq = list(set(keys))
    for i in range(0, len(uniq), 500):
        chunk = uniq[i:i + 500]
        q = f"SELECT vec_key, vec FROM vectors WHERE vec_key IN ({','.join('?' * len(chunk))})"
        for k, blob in prev.conn.execute(q, chunk):
            out[k] = np.frombuffer(blob, dtype=np.float32)
    return out


def _row(name: str, rel: str, digest: str, entry, report: FileReport) -> DocumentRow:
    langs = list(entry.languages) if entry and entry.languages else sorted(report.by_lang)
    return DocumentRow(
        name=name, path=rel, sha256=digest, title=(entry.title if entry and entry.title else Path(name).stem),
        author=entry.author if entry else "", year=entry.year if entry else None, languages=langs,
        laws_edition=entry.laws_edition if entry else None, doc_kind=entry.kind if entry else "",
        source=entry.source if entry else "", pages=report.pages, passages=report.passages, status="ok",
        message="")
