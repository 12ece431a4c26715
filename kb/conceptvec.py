"""Concept vectors: the glossary's dense side, embedded once at build time instead of at every search.

A search asks the dense index with the question itself and with the question's glossary concepts
rendered in the other languages (an Italian "renonce" question also asks in English "revoke" and
Greek "ρενόνς" jargon). Embedding those extra texts took three quarters of a search's time. Here
each (concept, language) rendering is embedded once, at build time, with the query encoder, and a
search composes the vectors it needs by summing the vectors of its concepts:

    target(lg)       = unit(Σ_c u[c, lg])                          for the concepts c of the question
    question+jargon  = unit(v_q + unit(Σ_c Σ_lg u[c, lg]))         lg over the other languages

Measured against embedding the texts themselves (bench/run.py): cosine median 0.95, min 0.90; dev-set
section Recall@5 unchanged. ``Weights.compose = False`` embeds the texts instead (the exact path).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from .glossary import Glossary

PER_LANG = 2  # terms per concept and language, as Glossary.expand renders them
LANGS = ("it", "en", "el")


def concept_texts(glossary: Glossary, langs: Iterable[str] = LANGS) -> list[tuple[str, str, str]]:
    """(concept id, language, text) for every concept rendering a composed query can use."""
    out = []
    for c in glossary:
        for lg in langs:
            terms = c.terms.get(lg, ())[:PER_LANG]
            if terms:
                out.append((c.id, lg, " ".join(terms)))
    return out


@dataclass
class ConceptVectors:
    """Unit vectors of concept renderings, by (concept id, language)."""

    index: dict[tuple[str, str], int]
    matrix: np.ndarray  # (n, dim) float32, unit rows

    @classmethod
    def load(cls, conn: sqlite3.Connection) -> ConceptVectors | None:
        """From a generation's store; None for a store built before concept vectors (exact path then)."""
        try:
            rows = conn.execute("SELECT c.concept, c.lang, v.vec FROM concept_vectors c "
                                "JOIN vectors v ON v.vec_key = c.vec_key ORDER BY c.rowid").fetchall()
        except sqlite3.OperationalError:  # no such table
            return None
        if not rows:
            return None
        matrix = np.stack([np.frombuffer(r[2], dtype=np.float32) for r in rows])
        return cls({(r[0], r[1]): i for i, r in enumerate(rows)}, matrix)

    def sum(self, concepts: Iterable[str], langs: Iterable[str]) -> np.ndarray | None:
        """Σ of the vectors of `concepts` in `langs` (None when none of them has a vector)."""
        idx = [i for c in concepts for lg in langs if (i := self.index.get((c, lg))) is not None]
        if not idx:
            return None
        return self.matrix[idx].sum(axis=0)

    def target(self, concepts: list[str], lang: str) -> np.ndarray | None:
        """The question's concepts said in `lang`'s jargon only."""
        s = self.sum(concepts, (lang,))
        return None if s is None else _unit(s)

    def with_question(self, qvec: np.ndarray, concepts: list[str], langs: Iterable[str]) -> np.ndarray | None:
        """The question plus its concepts in the other languages, given equal weight."""
        s = self.sum(concepts, langs)
        return None if s is None else _unit(qvec + _unit(s))


def _unit(v: np.ndarray) -> np.ndarray:
    n = float(np.linalg.norm(v))
    return (v / n if n > 0 else v).astype(np.float32)
