"""The knowledge base on disk: generations written aside and swapped in atomically.

    KB_DIR/
      CURRENT            name of the live generation (replaced with os.replace: atomic)
      gen-<time>-<rand>/ manifest.json · kb.sqlite (documents, passages, law tags, FTS5, vectors) · vectors.faiss

A build writes a whole new generation and only then points CURRENT at it, so a crash (even
SIGKILL) at any moment leaves the previous knowledge base answering exactly as before, and a
reader that opened a generation keeps a consistent view of it. Nothing is pickled: SQLite,
JSON and FAISS's own index format only.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ingest.model import Passage

from .lexical import PostingsWriter

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SCHEMA_VERSION = 4
# Exact search up to this many passages; HNSW above (M=32). With efConstruction 200 and efSearch 512,
# HNSW keeps recall@10 ≈ 0.96 of exact at 100k passages (bench/scale.py prints the table).
HNSW_ABOVE = 20_000
HNSW_EF_CONSTRUCTION = 200
HNSW_EF_SEARCH = 512
KEEP_GENERATIONS = 3


class KBError(Exception):
    """A knowledge-base problem with a one-line message saying what to do."""


def default_kb_dir() -> Path:
    return Path(os.environ.get("KB_DIR") or PROJECT_ROOT / ".kb")


def default_corpus_dir() -> Path:
    return Path(os.environ.get("CORPUS_DIR") or PROJECT_ROOT / "corpus")


SCHEMA = """
CREATE TABLE documents (
    name TEXT PRIMARY KEY, path TEXT, sha256 TEXT, title TEXT, author TEXT, year INTEGER,
    languages TEXT, laws_edition INTEGER, doc_kind TEXT, source TEXT, pages INTEGER,
    passages INTEGER, status TEXT, message TEXT, report TEXT);
CREATE TABLE passages (
    rowid INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, doc TEXT NOT NULL, page INTEGER, page_end INTEGER,
    lang TEXT, kind TEXT, title TEXT, text TEXT, laws TEXT, cites TEXT, inferred TEXT, heading TEXT,
    example_no TEXT, question TEXT, answer TEXT, deal TEXT, vec_key TEXT);
CREATE INDEX passages_doc ON passages(doc);
CREATE TABLE passage_tags (rowid INTEGER PRIMARY KEY, laws TEXT, inferred TEXT, kind TEXT, lang TEXT);
CREATE TABLE passage_laws (rowid INTEGER, law TEXT, rel TEXT, rank INTEGER, conf REAL);
CREATE INDEX passage_laws_law ON passage_laws(law, rel, rowid);  -- covering: law lookups read no table rows
CREATE TABLE vectors (vec_key TEXT PRIMARY KEY, vec BLOB);
CREATE TABLE concept_vectors (concept TEXT, lang TEXT, vec_key TEXT);
CREATE TABLE precedents (id TEXT, laws TEXT, vec_key TEXT);
CREATE VIRTUAL TABLE fts USING fts5(words, concepts, tokenize = 'unicode61 remove_diacritics 2');
CREATE TABLE bm25_postings (col TEXT NOT NULL, term TEXT NOT NULL, df INTEGER NOT NULL, rowids BLOB, weights BLOB);
CREATE INDEX bm25_postings_term ON bm25_postings(col, term, df);
CREATE TABLE bm25_stats (docs INTEGER, tokens INTEGER);
"""
# passage_tags: what ranking reads of each of a search's several hundred candidates, in rows a few dozen
# bytes wide (the passages rows carry the text). bm25_postings: the FTS5 columns' postings with their BM25
# weights (kb/lexical.py PostingsWriter), so a search scores its terms without FTS5's per-row bm25()
# calls. A generation written before these tables existed is read from passages and FTS5 as before.


@dataclass
class DocumentRow:
    name: str
    path: str
    sha256: str
    title: str
    author: str
    year: int | None
    languages: list[str]
    laws_edition: int | None
    doc_kind: str
    source: str
    pages: int
    passages: int
    status: str
    message: str


def row_to_passage(r: sqlite3.Row) -> Passage:
    return Passage.from_dict({
        "id": r["id"], "doc": r["doc"], "page": r["page"], "page_end": r["page_end"], "lang": r["lang"],
        "kind": r["kind"], "title": r["title"], "text": r["text"], "laws": json.loads(r["laws"]),
        "cites": json.loads(r["cites"]), "inferred": json.loads(r["inferred"]), "heading": r["heading"],
        "example_no": r["example_no"], "question": r["question"], "answer": r["answer"],
        "deal": json.loads(r["deal"]) if r["deal"] else None,
    })


class Generation:
    """One immutable, fully written knowledge base (read side)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self.manifest = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise KBError(f"knowledge base at {path} is unreadable ({e}); run: python -m ingest") from e
        if self.manifest.get("schema") != SCHEMA_VERSION:
            raise KBError(f"knowledge base at {path} was built by another version; run: python -m ingest")
        self.conn = sqlite3.connect(f"file:{path / 'kb.sqlite'}?mode=ro", uri=True, check_same_thread=False)
        self.conn.row_factory = sqlite3.Row
        self.index = None
        fa = path / "vectors.faiss"
        if fa.exists():
            import faiss

            self.index = faiss.read_index(str(fa))
            _tune_index(self.index)

    def close(self) -> None:
        self.conn.close()


def _tune_index(index) -> None:
    """Search-time knobs for approximate indexes (recall near exact; see bench/)."""
    import faiss

    try:
        inner = faiss.downcast_index(index.index) if hasattr(index, "index") else index
        if isinstance(inner, faiss.IndexHNSWFlat):
            inner.hnsw.efSearch = HNSW_EF_SEARCH
        elif isinstance(inner, faiss.IndexIVF):
            inner.nprobe = 16
    except Exception:  # an unknown index type is searched with its own defaults
        pass


def cores() -> int:
    """CPU cores this process may run on (2 on the reference machine)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def current_generation(kb_dir: Path) -> Path | None:
    try:
        name = (kb_dir / "CURRENT").read_text(encoding="utf-8").strip()
    except OSError:
        return None
    path = kb_dir / name
    return path if name and path.is_dir() else None


class GenerationWriter:
    """Writes a new generation aside; `commit()` makes it live, anything else leaves no trace."""

    def __init__(self, kb_dir: Path) -> None:
        self.kb_dir = Path(kb_dir)
        self.kb_dir.mkdir(parents=True, exist_ok=True)
        self.name = f"gen-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"
        self.tmp = Path(tempfile.mkdtemp(prefix=".building-", dir=self.kb_dir))
        (self.tmp / "PID").write_text(str(os.getpid()))
        self.conn = sqlite3.connect(self.tmp / "kb.sqlite")
        self.conn.executescript(SCHEMA)
        self.next_rowid = 1
        self.postings = PostingsWriter()

    def add_document(self, d: DocumentRow, report: dict) -> None:
        self.conn.execute(
            "INSERT INTO documents VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (d.name, d.path, d.sha256, d.title, d.author, d.year, json.dumps(d.languages), d.laws_edition,
             d.doc_kind, d.source, d.pages, d.passages, d.status, d.message, json.dumps(report)))

    def add_passage(self, p: Passage, terms: tuple[str, str], vec_key: str) -> int:
        rowid = self.next_rowid
        self.next_rowid += 1
        self.conn.execute(
            "INSERT INTO passages VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (rowid, p.id, p.doc, p.page, p.page_end, p.lang, p.kind, p.title, p.text, json.dumps(p.laws),
             json.dumps(p.cites), json.dumps(p.inferred), p.heading, p.example_no, p.question, p.answer,
             json.dumps(p.deal.to_dict()) if p.deal else None, vec_key))
        self.conn.execute("INSERT INTO passage_tags VALUES (?,?,?,?,?)",
                          (rowid, json.dumps(p.laws), json.dumps(p.inferred), p.kind, p.lang))
        rows = [(rowid, law, "law", i, 1.0) for i, law in enumerate(p.laws)]
        rows += [(rowid, law, "cite", i, 1.0) for i, law in enumerate(p.cites)]
        rows += [(rowid, law, "inferred", i, c) for i, (law, c) in enumerate(p.inferred.items())]
        self.conn.executemany("INSERT INTO passage_laws VALUES (?,?,?,?,?)", rows)
        self.conn.execute("INSERT INTO fts(rowid, words, concepts) VALUES (?,?,?)", (rowid, *terms))
        self.postings.add(rowid, *terms)
        return rowid

    def add_vectors(self, items: list[tuple[str, np.ndarray]]) -> None:
        self.conn.executemany("INSERT OR IGNORE INTO vectors VALUES (?,?)",
                              [(k, np.asarray(v, dtype=np.float32).tobytes()) for k, v in items])

    def add_concept_vectors(self, items: list[tuple[str, str, str]]) -> None:
        """(concept, language, vec_key) of the glossary renderings (vectors via add_vectors)."""
        self.conn.executemany("INSERT INTO concept_vectors VALUES (?,?,?)", items)

    def add_precedents(self, items: list[tuple[str, list[str], str]]) -> None:
        """(id, laws, vec_key) of the precedent questions (kb/precedents.py; vectors via add_vectors)."""
        self.conn.executemany("INSERT INTO precedents VALUES (?,?,?)",
                              [(i, json.dumps(list(laws)), k) for i, laws, k in items])

    def write_index(self, ids: np.ndarray, vectors: np.ndarray, index_type: str = "auto") -> str:
        import faiss

        if len(ids) == 0:
            return "none"
        dim = vectors.shape[1]
        kind = index_type if index_type != "auto" else ("flat" if len(ids) < HNSW_ABOVE else "hnsw")
        if kind == "hnsw":
            base = faiss.IndexHNSWFlat(dim, 32, faiss.METRIC_INNER_PRODUCT)
            base.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
        else:
            base = faiss.IndexFlatIP(dim)
        faiss.omp_set_num_threads(cores())  # searches in this process may have set 1
        index = faiss.IndexIDMap2(base)
        index.add_with_ids(np.ascontiguousarray(vectors, dtype=np.float32), ids.astype(np.int64))
        faiss.write_index(index, str(self.tmp / "vectors.faiss"))
        return kind

    def commit(self, manifest: dict) -> Path:
        self._write_postings()
        self.conn.commit()
        self.conn.execute("PRAGMA optimize")
        self.conn.close()
        manifest = {**manifest, "schema": SCHEMA_VERSION, "generation": self.name}
        _write_atomic(self.tmp / "manifest.json", json.dumps(manifest, indent=2, ensure_ascii=False))
        _fsync_dir(self.tmp)
        final = self.kb_dir / self.name
        os.rename(self.tmp, final)
        _fsync_dir(self.kb_dir)
        _write_atomic(self.kb_dir / "CURRENT", self.name + "\n")
        _fsync_dir(self.kb_dir)
        collect_garbage(self.kb_dir)
        return final

    def _write_postings(self) -> None:
        """The BM25 postings of everything added (written once, when the collection statistics are known)."""
        self.conn.executemany("INSERT INTO bm25_postings VALUES (?,?,?,?,?)", self.postings.rows())
        self.conn.execute("INSERT INTO bm25_stats VALUES (?,?)", (self.postings.docs, self.postings.tokens))
        self.postings = PostingsWriter()

    def abort(self) -> None:
        try:
            self.conn.close()
        finally:
            shutil.rmtree(self.tmp, ignore_errors=True)


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:6]}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def collect_garbage(kb_dir: Path, keep: int = KEEP_GENERATIONS) -> None:
    """Remove abandoned build folders and all but the newest `keep` generations (never the live one)."""
    live = current_generation(kb_dir)
    gens = sorted(p for p in kb_dir.glob("gen-*") if p.is_dir())
    for p in gens[:-keep]:
        if p != live:
            shutil.rmtree(p, ignore_errors=True)
    for p in kb_dir.glob(".building-*"):
        try:
            age = time.time() - p.stat().st_mtime
        except OSError:
            continue
        if age > 6 * 3600 or not _pid_alive_marker(p):
            shutil.rmtree(p, ignore_errors=True)


def _pid_alive_marker(p: Path) -> bool:
    """A build folder is in use while its writer process lives (marker written by the builder)."""
    try:
        pid = int((p / "PID").read_text())
    except (OSError, ValueError):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
