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

import re

from . import lawref
from .glossary import default_glossary
from .textnorm import stem_words, words

_DEAL_LINE = re.compile(r"^\s*[♠♥♦♣]")
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
    body = "\n".join(ln for ln in text.split("\n") if not _DEAL_LINE.match(ln))
    full = f"{title}\n{body}"
    toks = content_tokens(full, lang)
    concepts = [concept_token(c) for c in default_glossary().concept_ids(full, broader=True)]
    tags = {a for law in laws for a in [law, *lawref.ancestors(law)]}
    concepts += [law_token(t) for t in sorted(tags)]
    return " ".join(toks), " ".join(concepts)


def query_words(query: str, lang: str) -> list[str]:
    """Distinct stemmed words of the query in its own language."""
    seen: set[str] = set()
    return [t for t in content_tokens(query, lang) if not (t in seen or seen.add(t))]


def query_concepts(query: str, refs: list[str] | None = None) -> list[str]:
    """Language-neutral tokens: glossary concepts found in the query and the law addresses it names."""
    toks = [law_token(r) for r in (refs or [])]
    toks += [concept_token(c) for c in default_glossary().concept_ids(query, broader=True)]
    seen: set[str] = set()
    return [t for t in toks if not (t in seen or seen.add(t))]


def fts_query(terms: list[str], column: str | None = None) -> str:
    """An FTS5 MATCH expression; tokens are alphanumeric, quoting makes operators inert anyway."""
    expr = " OR ".join(f'"{t}"' for t in terms)
    return f"{column} : ({expr})" if column else expr
