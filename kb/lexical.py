"""What the lexical index (SQLite FTS5, BM25) sees of a passage and of a query.

Both sides go through the same folding (`textnorm.fold`) and the Snowball stemmer of their own
language; on top, each side carries language-neutral tokens, so lexical matching also works
across languages:
- concept tokens (`zc…`) from the trilingual glossary: "ρενονς", "renonce" and "revoke" all
  become the same token;
- law tokens (`zl…`) for every law a passage is about and its ancestors, so "45C4b" typed in a
  query meets the passages tagged with it.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Iterator

import numpy as np

from . import lawref
from .glossary import default_glossary, question_glossary
from .textnorm import prose, stem_words, words

_MIN_LEN = 3


def law_token(ref: str) -> str:
    return "zl" + ref.lower()


def concept_token(cid: str) -> str:
    return "zc" + cid.replace("_", "").lower()


def content_tokens(text: str, lang: str) -> list[str]:
    toks = [w for w in words(text) if len(w) >= _MIN_LEN or w.isdigit()]
    return stem_words(toks, lang)


def passage_terms(title: str, text: str, lang: str, laws: list[str]) -> tuple[str, str]:
    """(words, concepts): stemmed words in the passage's language, and language-neutral tokens."""
    full = f"{title}\n{prose(text)}"
    toks = content_tokens(full, lang)
    concepts = [concept_token(c) for c in default_glossary().concept_ids(full, broader=True)]
    tags = {a for law in laws for a in [law, *lawref.ancestors(law)]}
    concepts += [law_token(t) for t in sorted(tags)]
    return " ".join(toks), " ".join(concepts)


def query_words(query: str, lang: str, *, negations: bool = True) -> list[str]:
    """Distinct stemmed words of the query in its own language, less what it says did not happen.

    ``negations=False`` for text that holds none, such as the glossary's expansion of a query (a list
    of terms: a term with "not" in it would otherwise read as negating the next one)."""
    seen: set[str] = set()
    text = question_glossary().without_negated(query) if negations else query
    return [t for t in content_tokens(text, lang) if not (t in seen or seen.add(t))]


def query_concepts(query: str, refs: list[str] | None = None) -> list[str]:
    """Language-neutral tokens: glossary concepts found in the query and the law addresses it names."""
    toks = [law_token(r) for r in (refs or [])]
    toks += [concept_token(c) for c in question_glossary().concept_ids(query, broader=True)]
    seen: set[str] = set()
    return [t for t in toks if not (t in seen or seen.add(t))]


def fts_query(terms: list[str], column: str | None = None) -> str:
    """An FTS5 MATCH expression; tokens are alphanumeric, quoting makes operators inert anyway."""
    expr = " OR ".join(f'"{t}"' for t in terms)
    return f"{column} : ({expr})" if column else expr


# --------------------------------------------------------------------------- BM25 postings
#
# FTS5 ranks an OR query by calling bm25() on *every* row that matches any term (~2 µs a row), and
# the frequent words of a question ("the", "card", "dichiar") match half the collection: at 100k
# passages one search's two lexical queries cost ~430 ms. The same scores come from postings
# written at build time: per (column, term) the passages that contain it with the term's BM25
# weight in each (tf and length normalisation, FTS5's k1/b/avgdl), so a query only reads its terms'
# postings and sums idf × weight with numpy (~10 ns a posting). FTS5 stays the fallback.

BM25_K1, BM25_B = 1.2, 0.75  # the constants of FTS5's bm25()
IDF_FLOOR = 1e-6  # FTS5's idf for a term in more than half the rows
# A search reads at most this many postings per lexical list (~15 ms of numpy at 100k passages);
# beyond, the most frequent terms (lowest idf) are left out first. No list comes near it at 100k.
MAX_POSTINGS = 2_000_000
ROWID_DTYPE, WEIGHT_DTYPE = np.int32, np.float32  # 8 bytes a posting on disk


class PostingsWriter:
    """Collects the postings of the passages a build adds; `rows()` gives them BM25-weighted.

    Tokens are the space-separated terms given to FTS5 (already folded and stemmed, alphanumeric),
    and a passage's length is its token count over both columns, as FTS5's bm25() counts it.
    """

    COLUMNS = ("words", "concepts")

    def __init__(self) -> None:
        self._post: dict[tuple[str, str], tuple[array, array]] = {}
        self._len = array("i")
        self._rowids = array("i")

    def add(self, rowid: int, *columns: str) -> None:
        n = 0
        for col, text in zip(self.COLUMNS, columns, strict=True):
            toks = text.split()
            n += len(toks)
            for term, tf in Counter(toks).items():
                p = self._post.get((col, term))
                if p is None:
                    p = self._post[(col, term)] = (array("i"), array("i"))
                p[0].append(rowid)
                p[1].append(tf)
        self._rowids.append(rowid)
        self._len.append(n)

    @property
    def docs(self) -> int:
        return len(self._rowids)

    @property
    def tokens(self) -> int:
        return int(sum(self._len))

    def rows(self) -> Iterator[tuple[str, str, int, bytes, bytes]]:
        """(column, term, df, rowids, weights) per term; the arrays as bytes (ROWID_DTYPE, WEIGHT_DTYPE)."""
        if not self._rowids:
            return
        rowids = np.frombuffer(self._rowids, np.int32)
        avgdl = self.tokens / len(rowids)
        norm = np.zeros(int(rowids.max()) + 1)
        norm[rowids] = BM25_K1 * (1 - BM25_B + BM25_B * np.frombuffer(self._len, np.int32) / avgdl)
        for (col, term), (ids, tfs) in self._post.items():
            r = np.frombuffer(ids, np.int32)
            tf = np.frombuffer(tfs, np.int32).astype(np.float64)
            w = tf * (BM25_K1 + 1) / (tf + norm[r])
            yield col, term, len(r), r.astype(ROWID_DTYPE).tobytes(), w.astype(WEIGHT_DTYPE).tobytes()


def bm25_idf(df: int, docs: int) -> float:
    """FTS5's idf: log((N - df + 0.5) / (df + 0.5)), floored so a very frequent term still counts a little."""
    idf = math.log((docs - df + 0.5) / (df + 0.5))
    return idf if idf > 0 else IDF_FLOOR


def bounded_terms(dfs: list[tuple[str, int]], budget: int | None = None) -> list[str]:
    """The terms to read, in query order: the rarest first while their postings fit in `budget`
    (MAX_POSTINGS; at least one term). Terms in no passage are dropped: they match nothing."""
    budget = MAX_POSTINGS if budget is None else budget
    order = sorted((i for i, (_, df) in enumerate(dfs) if df > 0), key=lambda i: (dfs[i][1], i))
    keep: set[int] = set()
    total = 0
    for i in order:
        if keep and total + dfs[i][1] > budget:
            break
        keep.add(i)
        total += dfs[i][1]
    return [dfs[i][0] for i in sorted(keep)]


def posting_arrays(rowids: bytes | np.ndarray, weights: bytes | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A posting list as arrays: rowids in fancy indexing's own type, weights as stored. Arrays pass through
    (a search keeps the postings it read, see search._postings_candidates)."""
    if not isinstance(rowids, np.ndarray):
        rowids = np.frombuffer(rowids, ROWID_DTYPE).astype(np.intp)
    if not isinstance(weights, np.ndarray):
        weights = np.frombuffer(weights, WEIGHT_DTYPE)
    return rowids, weights


def bm25_top(postings: list[tuple[bytes | np.ndarray, bytes | np.ndarray, float]], limit: int) -> list[int]:
    """Rowids of the `limit` best BM25 scores from (rowids, weights, idf) postings; ties by rowid.

    Scores are summed term by term into one array over the rowids (a term's rowids are distinct, so
    `scores[ids] += …` is exact): ~7 ns a posting, 100 from ~90,000 matches in under a millisecond."""
    if not postings or limit <= 0:
        return []
    arrays = [posting_arrays(r, w) for r, w, _ in postings]
    if not any(len(r) for r, _ in arrays):
        return []
    scores = np.zeros(max(int(r.max()) for r, _ in arrays if len(r)) + 1)
    for (r, w), (_, _, idf) in zip(arrays, postings, strict=True):
        scores[r] += w * idf
    if limit < len(scores):  # everything at least as good as the limit-th best (ties included)
        cut = np.partition(scores, len(scores) - limit)[len(scores) - limit]
        hit = np.flatnonzero(scores >= cut) if cut > 0 else np.flatnonzero(scores)
    else:
        hit = np.flatnonzero(scores)
    return hit[np.lexsort((hit, -scores[hit]))][:limit].tolist()
