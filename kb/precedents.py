"""Precedents: director questions whose deciding law is known, as votes for the law of a new question.

Why: the adapted model (kb/models, train/README.md) puts a story near the passages of its law, but the
passages are law-book prose and lessons, while the 840 questions it was trained on (and 345 more written
later) are stories told the way directors tell them. A new question is often closest to a few of those, and
their laws are a second opinion on which of the retrieved laws decides it: the laws of its 10 nearest
precedents (cosine of the question vectors), each weighted by its similarity, normalised to 1 for the most
voted, join the concept-law hints of the ranking (kb/search.py ``rank``).

A vote only knows the laws the precedents cover. A user's documents about other laws (Law 67, a defective
trick, has no precedent) would lose to the covered laws the neighbours vote for, so a law number no
precedent is about counts as half the strongest vote (:data:`UNKNOWN_LAW`): "don't know" is neither a yes
nor a no. Measured with lessons on uncovered laws added to the corpus (bench/unseen.py sets): without that
rule section Recall@5 on their questions fell from 0.63 to 0.38 and from 0.85 to 0.77.

And a question far from every precedent is one they know little about: how near its nearest precedent is,
read against how near precedents usually are to each other (:meth:`Precedents.confidence`), scales their votes
down and lifts the uncovered laws' half vote towards a full one. On those lessons' questions section R@5 rose
0.71 → 0.77, 0.83 → 0.83 and, on a third set measured only after the choice, 0.63 → 0.75 (MRR@10 +0.05 to +0.14);
on the held-out questions about the default corpus it cost 0.006 (two questions of 384).

The questions ship with the package (``kb/models/questions/*.jsonl``: ``query`` and ``gold`` laws, written
for training by helpers who saw no evaluation set). A build keeps their vectors in the generation (table
``precedents``). Embedding them takes ~25 s on two cores, so their vectors for the default model ship too
(``kb/models/precedent-vectors.safetensors``, made by ``python -m kb.precedents``), keyed like the store's vectors
(model name and text): a build takes the previous generation's, else the shipped ones, and embeds only
those neither has (another model, an edited question).
"""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import lawref
from .record import situation
from .search import dense_text, prepare_query

QUESTIONS_DIR = Path(__file__).resolve().parent / "models" / "questions"
SHIPPED = Path(__file__).resolve().parent / "models" / "precedent-vectors.safetensors"
NEIGHBOURS = 10
UNKNOWN_LAW = 0.5  # a law number no precedent covers: this share of the strongest vote


@dataclass(frozen=True)
class Precedent:
    id: str
    text: str
    laws: tuple[str, ...]


def load_questions(folder: Path = QUESTIONS_DIR) -> list[Precedent]:
    """Every ``*.jsonl`` line of `folder` with a question and at least one valid law (others skipped)."""
    out: list[Precedent] = []
    for path in sorted(Path(folder).glob("*.jsonl")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            text = str(rec.get("query") or "").strip()
            laws = tuple(g for g in rec.get("gold") or () if isinstance(g, str) and lawref.is_canonical(g))
            if text and laws:
                out.append(Precedent(str(rec.get("id") or f"{path.stem}:{n}"), text, laws))
    return out


def precedent_key(model_name: str, p: Precedent) -> str:
    """A precedent's vector key: the model and the question as written (see kb/build.py)."""
    from .build import vec_key

    return vec_key(model_name, f"precedent\x00{p.text}")


def question_text(text: str) -> str:
    """What a search embeds of a question (kb/knowledge.py): the situation without the board's record."""
    q, _ = prepare_query(text)
    return dense_text(situation(q).text)


@dataclass
class Precedents:
    """Unit vectors of precedent questions and their laws."""

    matrix: np.ndarray  # (n, dim) float32, unit rows
    laws: list[tuple[str, ...]]

    def __post_init__(self) -> None:
        self.numbers = {lawref.parts(law)[0] for laws in self.laws for law in laws}
        self.near, self.far = _how_near(self.matrix)

    def confidence(self, top: float) -> float:
        """How far a question's precedents speak for it, from its nearest one's similarity `top`: 1 at least as
        near as precedents usually are to each other, 0 at :attr:`far` or farther, linear between."""
        if self.near <= self.far:
            return 1.0
        return min(max((top - self.far) / (self.near - self.far), 0.0), 1.0)

    @classmethod
    def load(cls, conn: sqlite3.Connection) -> Precedents | None:
        """From a generation's store; None for a store built without them."""
        try:
            rows = conn.execute("SELECT p.laws, v.vec FROM precedents p "
                                "JOIN vectors v ON v.vec_key = p.vec_key ORDER BY p.rowid").fetchall()
        except sqlite3.OperationalError:  # no such table: built before precedents
            return None
        if not rows:
            return None
        matrix = np.stack([np.frombuffer(r[1], dtype=np.float32) for r in rows])
        return cls(matrix, [tuple(json.loads(r[0])) for r in rows])

    def votes(self, qvec: np.ndarray, k: int = NEIGHBOURS, sims: np.ndarray | None = None) -> dict[str, float]:
        """Laws of the `k` nearest precedents, each weighted by its (positive) cosine; the top law is 1."""
        if qvec.shape[-1] != self.matrix.shape[1]:
            return {}
        sims = self.matrix @ qvec if sims is None else sims
        k = min(k, len(sims))
        near = np.argpartition(-sims, k - 1)[:k]
        votes: dict[str, float] = defaultdict(float)
        for i in near:
            for law in self.laws[i]:
                votes[law] += max(float(sims[i]), 0.0)
        top = max(votes.values(), default=0.0)
        return {law: v / top for law, v in votes.items()} if top > 0 else {}

    def hints(self, qvec: np.ndarray, candidate_laws: Iterable[str], k: int = NEIGHBOURS,
              unknown: float = UNKNOWN_LAW, fade: bool = True) -> dict[str, float]:
        """:meth:`votes`, plus `unknown` for each law number among `candidate_laws` no precedent is about.

        With `fade`, a question far from every precedent is one they know little about: their votes count
        by :meth:`confidence`, and a law they do not cover rises from `unknown` towards a full vote."""
        if qvec.shape[-1] != self.matrix.shape[1]:
            return {}
        sims = self.matrix @ qvec
        out = self.votes(qvec, k, sims)
        if out and fade:
            c = self.confidence(float(sims.max()))
            out = {law: v * c for law, v in out.items()}
            unknown += (1.0 - unknown) * (1.0 - c)
        if out and unknown > 0:
            for n in {lawref.parts(law)[0] for law in candidate_laws} - self.numbers:
                out[str(n)] = max(out.get(str(n), 0.0), unknown)
        return out


MIN_FOR_CALIBRATION = 20  # fewer precedents than this: no reading of how near is near (confidence 1)


def _how_near(matrix: np.ndarray) -> tuple[float, float]:
    """(near, far) for :meth:`Precedents.confidence`, from the precedents themselves, so that any model's
    similarity scale is read on its own terms: `near` is the median similarity of a precedent to its nearest
    other one; `far` lies twice as far below it as their 10th percentile (default model: 0.58 and 0.38)."""
    n = len(matrix)
    if n < MIN_FOR_CALIBRATION:
        return 0.0, 0.0
    best = np.full(n, -1.0, np.float32)
    for a in range(0, n, 1024):  # blocks: a user's casebook may hold many thousands
        block = matrix[a:a + 1024] @ matrix.T
        block[np.arange(len(block)), np.arange(a, a + len(block))] = -1.0  # not itself
        best[a:a + len(block)] = block.max(1)
    near, p10 = float(np.median(best)), float(np.percentile(best, 10))
    return near, near - 2 * (near - p10)


def shipped_vectors(path: Path = SHIPPED) -> dict[str, np.ndarray]:
    """The shipped precedent vectors by vector key (empty when the file is missing or unreadable).

    A safetensors file (nothing in it is code): ``vectors`` float16 (n, dim), ``keys`` the sha1 of each key."""
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    try:
        z = load_file(str(path))
        keys, vecs = [bytes(k).hex() for k in z["keys"]], z["vectors"].astype(np.float32)
    except (OSError, SafetensorError, KeyError, ValueError):
        return {}
    if len(keys) != len(vecs):
        return {}
    vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)  # stored as float16
    return dict(zip(keys, vecs, strict=True))


def write_shipped_vectors(path: Path = SHIPPED) -> int:
    """Embed every precedent with the default model's query encoder into `path`; the number written."""
    from safetensors.numpy import save_file

    from .embed import LazyEmbedder

    embedder = LazyEmbedder()
    items = load_questions()
    keys = [precedent_key(embedder.name, p) for p in items]
    vecs = embedder.encode_queries([question_text(p.text) for p in items])
    tmp = path.with_name(path.name + ".tmp")
    save_file({"keys": np.array([np.frombuffer(bytes.fromhex(k), np.uint8) for k in keys]),
               "vectors": vecs.astype(np.float16)}, str(tmp), metadata={"model": embedder.name})
    tmp.replace(path)
    return len(keys)


def merge_hints(hints: dict[str, float] | None, extra: dict[str, float], weight: float) -> dict[str, float]:
    """The concept-law hints with `extra` × `weight` beside them (the stronger of the two per law)."""
    out = dict(hints or {})
    for law, v in extra.items():
        out[law] = max(out.get(law, 0.0), weight * v)
    return out


if __name__ == "__main__":
    print(f"{write_shipped_vectors()} precedent vectors written to {SHIPPED}")
