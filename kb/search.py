"""A query in, ranked hits out: understand → retrieve (lexical + dense) → fuse → law evidence → hits.

- Law addresses in the query ("45C4b", "art. 45 C 4 b", "Νόμος 45Γ4β") are recognised and the
  passages about them put first.
- Lexical (FTS5/BM25 over stemmed, folded text + glossary concept tokens) and dense (E5 + FAISS)
  candidates are fused with reciprocal rank fusion; dense candidates are never filtered by
  lexical hits (that would kill cross-language recall).
- Evidence is then aggregated per law address across languages and kinds: a law whose passages
  score well anywhere lifts all its passages, so a law present only in Italian still ranks for
  a Greek or English question.
"""

from __future__ import annotations

import heapq
import re
import sqlite3
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

import numpy as np

from ingest import lang as langid

from . import lawref
from .conceptvec import ConceptVectors
from .glossary import law_phase, question_glossary
from .lexical import bm25_idf, bm25_top, bounded_terms, fts_query, posting_arrays
from .store import HNSW_ABOVE, cores
from .textnorm import fold, prose, stem_words, words

MAX_QUERY_CHARS = 2000
CANDIDATES = 100


@dataclass
class Weights:
    """Ranking knobs (tuned on the dev set with a held-out split; see bench/ablation.py)."""

    rrf_k: float = 60.0
    lexical: float = 1.0
    # With the adapter (kb/models, train/README.md) the question's own dense list is the strongest evidence:
    # pooled tuning sets 0.875 / 0.698 (section R@5 / MRR@10) at 1, 0.891 / 0.716 at 2, 0.904 / 0.743 at 4,
    # 0.909 / 0.769 at 10, 0.910 / 0.778 at 20; past 10 the lexical lists only break near-ties.
    dense: float = 10.0
    expand: bool = True  # glossary expansion of the lexical query across languages
    concepts: float = 1.5  # the language-neutral lexical list (glossary concepts + law tokens)
    dense_expand: float = 0.0  # a dense query of the question plus its expansion (measured: no gain; off)
    dense_lang: float = 0.5  # the dense list ranked within each passage language (see by_language)
    # dense queries made of the glossary expansion alone, one per other language: off since the adapter (beside
    # the question's list at 10, 0.5 changed nothing: pooled tuning 0.909/0.971/0.769 with, 0.910/0.973/0.769 without)
    dense_target: float = 0.0
    law_evidence: float = 0.0  # how much a law's aggregated score lifts its passages (measured: no gain)
    # score multiplier per passage kind; commentary at 0.85 measured a question worse on tune and
    # held-out and no better on dev, so none (untagged passages are already ranked lower)
    kind_prior: dict[str, float] = field(default_factory=dict)
    untagged: float = 0.6  # passages with no explicit law (only inferred) rank below tagged ones
    generic: float = 0.8  # passages tagged only with a bare law number (45) below specific ones (45C4b)
    inferred_weight: float = 0.5
    diversity: float = 0.8  # each earlier hit on the same law section multiplies a later one's score
    ref_boost: float = 1.0  # passages about a law named in the query, when the query is nothing but addresses
    # ... and when it also describes a situation, in first places of one list: the writer's citation is
    # evidence, not the answer (directors cite the wrong law, or the right law and the wrong section)
    cited: float = 2.0
    concept_laws: float = 0.45  # lift for passages on the laws the query's glossary concepts relate to
    hint_tokens: bool = True  # ... and those laws' tokens in the language-neutral lexical list
    routine_hints: float = 0.0  # ... as a share of it for routine concepts ("a lead", "from dummy") beside others
    compose: bool = True  # glossary dense queries composed from concept vectors (conceptvec.py), not embedded
    record: bool = True  # the board's record (hands, auction, header) set aside before reading (record.py)
    framing: bool = True  # sentences that only say who and where ("I was the TD, club pairs") set aside too
    accents: bool = True  # Greek typed without accents given the glossary's spelling before the model reads it
    greeklish: bool = True  # Greek typed in Latin letters read as Greek (Glossary.from_greeklish)
    # a passage whose laws all belong to the other phase than the story (auction, Laws 17-40; play, 41-72) scores
    # this share (Glossary.story_phase): pooled tuning 0.894 / 0.744 -> 0.897 / 0.745 at 0.8, the same down to 0.4
    phase: float = 0.8
    # the laws of the question's nearest labelled questions (kb/precedents.py) join the concept-law hints at this
    # share: pooled tuning 0.899 / 0.746 -> 0.909 / 0.764 (section R@5 / MRR@10) at 1, 0.907 / 0.778 at 1.5
    precedents: float = 1.0
    precedent_k: int = 10  # how many nearest precedents vote (5: 0.908 / 0.766, 20: 0.907 / 0.765)
    unknown_law: float = 0.5  # a law number no precedent is about: this share of the strongest vote
    # votes fade, and uncovered laws rise, as a question is far from every precedent (Precedents.confidence); section
    # R@5 / law R@5 / MRR@10 without -> with: tuning 0.910/0.974/0.770 -> 0.913/0.977/0.770, held-outs 4-12
    # 0.904/0.958/0.760 -> 0.898/0.948/0.751; lessons on laws nobody covers (bench/unseen.py) unseen 0.71/0.79/0.42 ->
    # 0.77/0.85/0.55, unseen2 0.83/0.94/0.52 -> 0.83/0.94/0.61, unseen3 (never read) 0.63/0.67/0.38 -> 0.75/0.81/0.42
    precedent_fade: bool = True


@dataclass
class AlsoIn:
    lang: str
    doc: str
    page: int
    id: str
    law: str


@dataclass
class Hit:
    id: str
    doc: str
    page: int
    page_end: int | None
    lang: str
    kind: str
    title: str
    laws: list[str]
    cites: list[str]
    inferred: dict[str, float]
    score: float
    text: str
    snippet: str
    also_in: list[AlsoIn] = field(default_factory=list)
    same_text: list[AlsoIn] = field(default_factory=list)  # the same text elsewhere, left out of the hits below it
    example_no: str | None = None
    question: str | None = None
    answer: str | None = None
    deal: dict | None = None


@dataclass
class SearchResult:
    query: str
    lang: str
    refs: list[str]
    hits: list[Hit]
    notices: list[str] = field(default_factory=list)
    law_only: bool = False  # the query was nothing but law address(es)
    record: list[str] = field(default_factory=list)  # the board's record, set aside (kb/record.py)
    framing: list[str] = field(default_factory=list)  # framing sentences, set aside (kb/record.py)


def prepare_query(query: str) -> tuple[str, list[str]]:
    notices: list[str] = []
    q = (query or "").replace("\x00", " ").strip()
    if len(q) > MAX_QUERY_CHARS:
        notices.append(f"query too long: the first {MAX_QUERY_CHARS} characters were used")
        q = q[:MAX_QUERY_CHARS]
    return q, notices


def detect_query_lang(q: str) -> str:
    return langid.detect(q, default="und")


def lexical_candidates(conn, terms: list[str], limit: int, column: str | None = None,
                       memo: dict | None = None) -> list[int]:
    """BM25 ranking over one column ('words' in the query's language, or 'concepts'): from the
    generation's BM25 postings (FTS5's scores, without its per-row cost), else from FTS5 itself.
    `memo`: a per-generation dict where the postings read are kept for later searches."""
    if not terms:
        return []
    if column is not None:
        ranked = _postings_candidates(conn, terms, limit, column, memo)
        if ranked is not None:
            return ranked
    rows = conn.execute("SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY bm25(fts) LIMIT ?",
                        (fts_query(terms, column), limit)).fetchall()
    return [r[0] for r in rows]


POSTINGS_MEMO_BYTES = 64 << 20  # postings a process keeps between searches (at 100k passages, ~300 frequent terms)


def _postings_candidates(conn, terms: list[str], limit: int, column: str, memo: dict | None = None
                         ) -> list[int] | None:
    """Top BM25 rowids from bm25_postings (None for a generation written without them).

    Reads document frequencies first (index only), so that a bounded set of terms, rarest first,
    is all whose postings are read (see lexical.bounded_terms). What it reads stays in `memo` (the
    words of questions recur: "declarer", "dummy", "card"), within POSTINGS_MEMO_BYTES."""
    terms = list(dict.fromkeys(terms))
    memo = {} if memo is None else memo
    docs = memo.get("docs") or _bm25_docs(conn, memo)
    if docs is None:
        return None
    dfs: dict[str, int] = memo.setdefault(("df", column), {})
    unknown = [t for t in terms if t not in dfs]
    if unknown:
        found = dict(conn.execute(f"SELECT term, df FROM bm25_postings WHERE col = ? AND term IN "
                                  f"({','.join('?' * len(unknown))})", (column, *unknown)).fetchall())
        dfs.update({t: found.get(t, 0) for t in unknown})
    keep = bounded_terms([(t, dfs[t]) for t in terms])
    if not keep:
        return []
    posts: dict[str, tuple[np.ndarray, np.ndarray]] = memo.setdefault(("postings", column), {})
    got = {t: posts[t] for t in keep if t in posts}  # held here: another search may empty the memo meanwhile
    unread = [t for t in keep if t not in got]
    if unread:
        for term, rowids, weights in conn.execute(
                f"SELECT term, rowids, weights FROM bm25_postings WHERE col = ? AND term IN "
                f"({','.join('?' * len(unread))})", (column, *unread)):
            got[term] = _remember(memo, column, term, rowids, weights)
    ranked = bm25_top([(*got[t], bm25_idf(dfs[t], docs)) for t in sorted(keep)], limit)
    if memo.get("bytes", 0) > POSTINGS_MEMO_BYTES:
        for key in [k for k in memo if isinstance(k, tuple) and k[0] == "postings"]:
            del memo[key]
        memo["bytes"] = 0
    return ranked


def preload_postings(conn, memo: dict) -> None:
    """Every posting of a small generation into `memo` (KnowledgeBase.warm_up): its first searches then
    read no SQLite at all for their lexical lists."""
    if _bm25_docs(conn, memo) is None:
        return
    for col, term, df, rowids, weights in conn.execute("SELECT col, term, df, rowids, weights FROM bm25_postings"):
        memo.setdefault(("df", col), {})[term] = df
        _remember(memo, col, term, rowids, weights)


def _bm25_docs(conn, memo: dict) -> int | None:
    """The generation's passage count for BM25's idf, noted in `memo`; None without bm25_stats."""
    try:
        stats = conn.execute("SELECT docs FROM bm25_stats").fetchone()
    except sqlite3.OperationalError:
        return None
    if stats is None:
        return None
    memo["docs"] = stats[0]
    return stats[0]


def _remember(memo: dict, column: str, term: str, rowids: bytes, weights: bytes) -> tuple[np.ndarray, np.ndarray]:
    """A term's postings as arrays, kept in `memo` and counted against its byte budget."""
    arrays = memo.setdefault(("postings", column), {})[term] = posting_arrays(rowids, weights)
    memo["bytes"] = memo.get("bytes", 0) + len(rowids) * 2 + len(weights)  # rowids widen to intp
    return arrays


def dense_queries(q: str, qlang: str, w: Weights, encode: Callable[[list[str]], np.ndarray],
                  cvecs: ConceptVectors | None = None) -> tuple[np.ndarray, list[float]]:
    """The query vectors of a search and their fusion weights: the question; the question with its
    glossary concepts in the other languages; and, per other language, the concepts alone in that
    language's jargon (a cross-language question then meets passages written in that jargon).

    With concept vectors (and ``w.compose``) only the question goes through the model; the others
    are sums of vectors embedded at build time. Without, their texts are embedded (the exact path).
    """
    glossary = question_glossary()
    q = dense_text(q, w.accents)
    others = [lg for lg in ("it", "en", "el") if lg != qlang]
    exp = glossary.expand(q, others) if w.dense_expand else ""
    targets = [lg for lg in others if w.dense_target and len(glossary.expand(q, (lg,)).split()) >= 3]
    if cvecs is not None and w.compose:
        qvec = encode([q])[0]
        concepts = glossary.concept_ids(q)
        vecs, weights = [qvec], [w.dense]
        if exp and (v := cvecs.with_question(qvec, concepts, others)) is not None:
            vecs.append(v)
            weights.append(w.dense_expand)
        for lg in targets:
            if (v := cvecs.target(concepts, lg)) is not None:
                vecs.append(v)
                weights.append(w.dense_target)
        return np.stack(vecs), weights
    texts, weights = [q], [w.dense]
    if exp:
        texts.append(f"{q}\n{exp}")
        weights.append(w.dense_expand)
    for lg in targets:
        texts.append(glossary.expand(q, (lg,)))
        weights.append(w.dense_target)
    return encode(texts), weights


_CARD = re.compile(r"\S*[♠♥♦♣]\S*")
SEATS = frozenset({"north", "east", "south", "west"})  # glossary concepts that name a seat, not a role


def dense_text(q: str, accents: bool = True) -> str:
    """What the model reads of a question: not what did not happen ("no revoke": the model cannot read
    the negation), nor seats (North, Ovest, Δυτικός) and cards or contracts written with suit symbols
    (♠7, 4♥). The Laws speak of declarer, dummy, defenders; seats and cards say nothing about the rule
    and draw the vector towards deal-heavy worked examples of any rule (section R@5 / MRR@10: dev
    0.94/0.84 → 0.94/0.85, tune 0.67/0.45 → 0.71/0.49; law R@5 on tune 0.79 → 0.83)."""
    glossary = question_glossary()
    text = glossary.without(q, lambda h: h.negated or h.concept.id in SEATS)
    out = re.sub(r"\s+", " ", _CARD.sub(" ", text)).strip() or q
    if shouting(out):  # the model has read little text in capitals: "ΕΙΠΕ ΠΑΣΟ ΠΡΩΤΟΣ" as "είπε πάσο πρώτος"
        out = out.lower()
    return glossary.with_accents(out) if accents else out


def shouting(text: str) -> bool:
    """Whether a text is written in capitals (most of its cased letters upper case; a heading or two
    in capitals inside ordinary text is not)."""
    upper = lower = 0
    for ch in text:
        if ch.isupper():
            upper += 1
        elif ch.islower():
            lower += 1
    return upper >= 12 and upper > 3 * lower


def dense_candidates(index, qvecs: np.ndarray, limit: int) -> list[list[int]]:
    """Nearest passages for each query vector (one FAISS call for all of them)."""
    if index is None or index.ntotal == 0:
        return [[] for _ in range(len(qvecs))]
    _faiss_threads(index.ntotal)
    _, ids = index.search(np.ascontiguousarray(qvecs, dtype=np.float32), min(limit, index.ntotal))
    return [[int(i) for i in row if i >= 0] for row in ids]


def _faiss_threads(ntotal: int) -> None:
    """One thread for a small (flat) index: a few vectors against a few thousand passages gain nothing
    from OpenMP, whose thread start-up and spinning cost milliseconds and stall under load (measured). A
    large (HNSW) index spreads the query vectors over the cores: at 100k passages three vectors take
    4.5 → 2.9 ms, search p50 −2 ms (bench/scale.py). Builds set their own thread count."""
    import faiss

    want = 1 if ntotal < HNSW_ABOVE else cores()
    if faiss.omp_get_max_threads() != want:
        faiss.omp_set_num_threads(want)


def fuse(lists: list[tuple[list[int], float]], w: Weights, scores: dict[int, float] | None = None
         ) -> dict[int, float]:
    """Reciprocal rank fusion of ranked lists, each with its weight: rowid → fused score.

    Adds to ``scores`` when given: a search fuses its lexical lists while the model is still reading
    the question, and the dense lists once the vector is there (the same sums, in the same order)."""
    scores = {} if scores is None else scores
    first = w.rrf_k + 1
    for ranked, weight in lists:
        if not weight:
            continue
        get = scores.get
        for r, rid in enumerate(ranked):
            scores[rid] = get(rid, 0.0) + weight / (first + r)
    return scores


@dataclass(frozen=True)
class Tags:
    """What ranking needs to know of a candidate passage."""

    laws: list[str]
    inferred: dict[str, float]
    kind: str
    lang: str

    @cached_property
    def own(self) -> list[str]:
        """The laws the passage is about: its tags, else its inferred laws."""
        return self.laws or list(self.inferred)

    @cached_property
    def section(self) -> str | None:
        """The law section of the passage's first law ("45C" for 45C4b), for diversity; None untagged."""
        return _section(self.own[0]) if self.own else None

    @cached_property
    def generic(self) -> bool:
        """Tagged with bare law numbers only (no section)."""
        return bool(self.laws) and max(lawref.depth(x) for x in self.laws) == 1


def by_language(ranked: list[int], tags: dict[int, Tags]) -> list[list[int]]:
    """Split a ranked list into one ranked list per passage language.

    The embedding model prefers passages in the query's own language; ranking within each
    language lets the best Italian passage compete with the best English one on equal terms.
    """
    out: dict[str, list[int]] = {}
    for rid in ranked:
        out.setdefault(tags[rid].lang, []).append(rid)
    return list(out.values())


def law_evidence(cands: dict[int, float], tags: dict[int, Tags], w: Weights) -> dict[str, float]:
    """Evidence per law address: the best candidate score in each language, summed over languages.

    Max within a language keeps a law with many passages (45–47 in two lessons) from outweighing
    one with a single precise paragraph; the sum across languages rewards agreement between an
    Italian law text and an English example about the same rule. Ancestors inherit the evidence.
    """
    best: dict[tuple[str, str], float] = {}
    for rid, score in cands.items():
        t = tags[rid]
        prior = w.kind_prior.get(t.kind, 1.0)
        contrib: dict[str, float] = {}
        for i, law in enumerate(t.laws):
            wt = 1.0 if i == 0 else 0.6
            for a in [law, *lawref.ancestors(law)]:
                contrib[a] = max(contrib.get(a, 0.0), wt)
        if not t.laws:
            for law, conf in t.inferred.items():
                for a in [law, *lawref.ancestors(law)]:
                    contrib[a] = max(contrib.get(a, 0.0), conf * w.inferred_weight)
        for a, wt in contrib.items():
            key = (a, t.lang)
            best[key] = max(best.get(key, 0.0), score * wt * prior)
    ev: dict[str, float] = defaultdict(float)
    for (a, _lang), v in best.items():
        ev[a] += v
    return ev


def rank(cands: dict[int, float], tags: dict[int, Tags], refs: list[str], w: Weights,
         hints: dict[str, float] | None = None, law_only: bool = True,
         phase: str | None = None) -> list[tuple[int, float]]:
    """Final scores: fused score × priors (kind, tagged, specific) × concept-law hints × the story's phase,
    + named-law boost; then section diversity. `hints`: laws the query's concepts relate to, weighted
    (Glossary.law_hints); `phase`: 'auction' or 'play' when the story is told in one (Glossary.story_phase)."""
    ev = law_evidence(cands, tags, w) if w.law_evidence else {}
    top_ev = max(ev.values()) if ev else 1.0
    unit = 1 / (w.rrf_k + 1)  # the score of a first-ranked candidate in one list
    boost = w.ref_boost if law_only else w.cited * unit
    hint_of: dict[str, float] = {}  # candidates share laws: each law against the hints once
    by_number: dict[int, list[tuple[str, float]]] = {}  # only a hint on the same law number can match
    for h, wt in (hints or {}).items():
        by_number.setdefault(lawref.parts(h)[0], []).append((h, wt))

    def hint(law: str) -> float:
        v = hint_of.get(law)
        if v is None:
            same = by_number.get(lawref.parts(law)[0], ())
            v = hint_of[law] = max((_hint_match(law, h) * wt for h, wt in same), default=0.0)
        return v
    scored = []
    for rid, score in cands.items():
        t = tags[rid]
        laws = t.laws
        s = score * w.kind_prior.get(t.kind, 1.0)
        if not laws:
            s *= w.untagged
        elif t.generic:
            s *= w.generic
        if ev:
            best = max((ev.get(law, 0.0) for law in t.own), default=0.0)
            s += w.law_evidence * (best / top_ev) * unit
        if hints and w.concept_laws:
            s *= 1.0 + w.concept_laws * max(map(hint, t.own), default=0.0)
        if phase and w.phase != 1.0 and t.own and all(law_phase(law) not in (phase, None) for law in t.own):
            s *= w.phase
        if refs:
            # the named law as a passage's primary tag counts fully, as a secondary one half
            s += boost * max((_ref_match(law, r) * (1.0 if i == 0 else 0.5)
                              for i, law in enumerate(laws) for r in refs), default=0.0)
        scored.append((rid, s))
    scored.sort(key=lambda x: -x[1])
    return diversify(scored, tags, w.diversity) if w.diversity < 1.0 else scored


def _ref_match(law: str, ref: str) -> float:
    """1 for the named law or a paragraph under it; less for an enclosing section (45C for 45C4b)."""
    if lawref.extends(law, ref):
        return 1.0
    if lawref.depth(law) >= 2 and lawref.extends(ref, law):
        return 0.5 * lawref.depth(law) / lawref.depth(ref)
    return 0.0


@lru_cache(maxsize=1 << 16)
def _hint_match(law: str, hint: str) -> float:
    """1 when a passage's law and a concept's law share the section (or one contains the other),
    0.5 for the same law number, else 0."""
    if lawref.extends(law, hint) or lawref.extends(hint, law):
        return 1.0 if min(lawref.depth(law), lawref.depth(hint)) >= 2 or lawref.depth(hint) == 1 else 0.5
    if lawref.parts(law)[0] != lawref.parts(hint)[0]:
        return 0.0
    return 1.0 if _section(law) == _section(hint) else 0.5


@lru_cache(maxsize=1 << 16)
def _section(law: str) -> str:
    n, sec, _, _ = lawref.parts(law)
    return f"{n}{sec or ''}"


def diversify(scored: list[tuple[int, float]], tags, factor: float, depth: int = 40) -> list[tuple[int, float]]:
    """Greedy re-rank: a passage on a law section already shown loses a share of its score, so the
    first screen covers the plausible sections instead of five passages on one.

    Greedy for the first `depth` places (the pages anyone reads); the tail keeps its order. Lazy:
    a score only ever falls, so a popped entry whose section gained no hit since it was scored is
    the best one (ties keep the input order)."""
    keys = [tags[rid].section or rid for rid, _ in scored]  # an untagged passage is its own section
    seen: dict[str | int, int] = {}
    heap = [(-s, i, 0) for i, (_, s) in enumerate(scored)]
    heapq.heapify(heap)
    out: list[tuple[int, float]] = []
    taken: set[int] = set()
    while heap and len(out) < depth:
        neg, i, count = heapq.heappop(heap)
        now = seen.get(keys[i], 0)
        if now != count:  # its section was shown since: score it again
            heapq.heappush(heap, (-scored[i][1] * factor ** now, i, now))
            continue
        seen[keys[i]] = now + 1
        taken.add(i)
        out.append((scored[i][0], -neg))
    return out + [x for i, x in enumerate(scored) if i not in taken]


# ---------------------------------------------------------------- snippets

_SENT = re.compile(r"(?<=[.!?;:])\s+")


def snippet(text: str, query_words: set[str], lang: str, width: int = 260) -> str:
    """The window of the passage with most query words, those words marked **like this**."""
    if not query_words:  # nothing to mark (a law page, the examples): its beginning, without reading its words
        body = _one_line(text)
        end = _window_end(body, 0, width)
        return body[:end] + ("…" if end < len(body) else "")
    body, tokens, where = _body_tokens(text, lang)
    if not body:
        return ""
    stems = _query_stems(frozenset(query_words), lang)
    # the passage's words that match, looked up from the smaller side (a question and its expansion
    # in three languages bring ~150 stems; a law paragraph has ~100-400 words)
    found: set[int] = set()
    if len(stems) < len(where):
        for k in stems:
            found.update(where.get(k, ()))
    else:
        for k, at in where.items():
            if k in stems:
                found.update(at)
    hits = [tokens[i] for i in sorted(found)]
    if hits:
        # the window starting at a hit that covers most hits (two pointers: linear in the hits)
        best_start, best_n, j = hits[0][0], 0, 0
        for i, h in enumerate(hits):
            j = max(j, i)
            while j + 1 < len(hits) and hits[j + 1][0] < h[0] + width:
                j += 1
            if j - i + 1 > best_n:
                best_start, best_n = h[0], j - i + 1
        start = max(0, body.rfind(" ", 0, max(0, best_start - 40)) + 1)
    else:
        start = 0
    end = _window_end(body, start, width)
    parts, pos = [], start
    for t0, t1 in hits:
        if t0 >= start and t1 <= end:
            parts += [body[pos:t0], "**", body[t0:t1], "**"]
            pos = t1
    parts.append(body[pos:end])
    return ("…" if start > 0 else "") + "".join(parts) + ("…" if end < len(body) else "")


def _window_end(body: str, start: int, width: int) -> int:
    """Where a snippet starting at `start` ends: `width` characters on, back to a space."""
    end = min(len(body), start + width)
    if end < len(body):
        end = body.rfind(" ", start, end) if body.rfind(" ", start, end) > start else end
    return end


def _one_line(text: str) -> str:
    """A passage's prose (no deal diagram lines) on one line: what a snippet is cut from."""
    return re.sub(r"\s+", " ", prose(text)).strip()


@lru_cache(maxsize=64)
def _query_stems(query_words: frozenset[str], lang: str) -> frozenset[str]:
    """A query's words and their stems in a passage language: once per search and language, not per hit."""
    return frozenset(stem_words(sorted(query_words), lang)) | query_words


SNIPPET_CACHE = 2048  # passages whose words a process keeps ready for snippets (~20 KB each: ~40 MB)


def prepare_snippets(text: str, lang: str) -> None:
    """Read a passage for its snippets ahead of a search (KnowledgeBase.warm_up, small collections)."""
    _body_tokens(text, lang)


@lru_cache(maxsize=SNIPPET_CACHE)
def _body_tokens(text: str, lang: str) -> tuple[str, list[tuple[int, int]], dict[str, list[int]]]:
    """A passage's prose on one line (no deal diagram lines), its words' spans, and where each word key
    (folded, stemmed) occurs. Cached: the same passages come back search after search."""
    body = _one_line(text)
    tokens: list[tuple[int, int]] = []
    where: dict[str, list[int]] = {}
    for i, m in enumerate(re.finditer(r"[^\W_]+", body)):
        tokens.append((m.start(), m.end()))
        for k in dict.fromkeys(_word_keys(m.group(0), lang)):
            where.setdefault(k, []).append(i)
    return body, tokens, where


@lru_cache(maxsize=1 << 16)
def _word_keys(word: str, lang: str) -> tuple[str, str] | tuple[()]:
    """(folded, stemmed) of a passage word, or () for words too short to mark ("the", "del", "και":
    marking function words helps nobody). Cached: the same words recur in every snippet."""
    f = fold(word)
    if len(f) < 4 and not f.isdigit():
        return ()
    return f, stem_words([f], lang)[0]


def query_word_set(q: str, langs: list[str]) -> set[str]:
    """Folded query words plus glossary equivalents in the passage languages (for marking)."""
    ws = {w for w in words(q) if len(w) >= 3}
    expanded = question_glossary().expand(q, langs)
    ws |= {w for w in words(expanded) if len(w) >= 3}
    return ws
