"""A query encoder for the default model that needs neither torch nor transformers at query time.

Why: importing sentence-transformers costs ~4 s and one query through it ~20 ms, while a search
embeds one or two short texts. This module runs the very same network with ONNX Runtime:

* tokens: the model dir's ``tokenizer.json`` (the file sentence-transformers itself loads), through
  kb/tokenizer.py (the same ids from a subset of the vocabulary that loads 1 s faster), truncated to
  512 tokens, the model's own ``query: `` prompt;
* word embeddings: rows gathered with numpy from a read-only memory map of the model's
  ``model.safetensors`` (the 250k x 384 table is 96% of the weights but a query touches a few dozen
  rows, so it stays out of the ONNX graph: the graph is 86 MB in fp32, 22 MB in int8, and loads fast);
* encoder + mean pooling + L2 normalisation: one ONNX graph exported from the converted BertModel
  (``torch.onnx.export``), with ONNX Runtime's BERT fusions (Attention, SkipLayerNorm, BiasGelu)
  applied offline; on request an int8 copy (``quantize_dynamic``, per-channel 7-bit weights).

The export runs once per converted model and lands next to it in the model cache
(``<model dir>-onnx<FORMAT>/``), written to a temporary folder and renamed into place, like
:func:`kb.embed.e5_model_dir`. At export time the fp32 graph is checked against the fp32
sentence-transformers model on a fixed it/en/el probe set (cosine 1.00000); the int8 copy, made the
first time it is asked for (SmoothQuant-ed, kb/smoothquant.py), against the fp32 graph (min cosine 0.998
for the plain model, 0.9885 with the adapter). The cosines are recorded
and decide which variants may be used by default (see :data:`MIN_COSINE`).

Passages are never encoded here: the index keeps its sentence-transformers fp32 vectors.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import tempfile
import time
import warnings
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import numpy as np

from .store import cores
from .tokenizer import QueryTokenizer

__all__ = ["FORMAT", "MIN_COSINE", "VARIANTS", "OnnxQueryEncoder", "FastUnavailable", "ensure_onnx",
           "ensure_int8", "onnx_dir_for", "export_report"]

FORMAT = 1  # bump when the exported files change; part of the cache folder name
MARKER = "onnx-export.json"  # written last: a folder holding it is complete
INT8_MARKER = "int8-check.json"  # written after encoder.int8.onnx, which is made on first request
INT8_FORMAT = 3  # bump when _quantize changes: a marker of another format means "make it again"
CALIBRATION = "int8-calibration.txt"  # kb/models/: texts whose activations set the SmoothQuant scales
VARIANTS = {"onnx": "encoder.onnx", "onnx-int8": "encoder.int8.onnx"}
# The least cosine to the fp32 sentence-transformers query vector, over the probe set, for a variant
# to be chosen by default (an explicit KB_QUERY_ENCODER still uses it, with a warning). int8 is a guard
# against a broken quantisation: with SmoothQuant (kb/smoothquant.py) its probe cosine is 0.9885 with the
# adapter (kb/models), 0.9983 with the plain model (without SmoothQuant: 0.957 and 0.994).
MIN_COSINE = {"onnx": 0.9999, "onnx-int8": 0.98}
MAX_TOKENS = 512
SINGLE_RUNS_UP_TO = 4
_STALE_TMP_S = 3600
_WORD_EMB = "embeddings.word_embeddings.weight"

# Probe texts for the export-time check: short and long, Italian / English / Greek, table talk and
# law-book prose, accents, final sigma, suit symbols. Written for this check (not from any eval set).
PROBE = [
    "il morto ha giocato una carta che il dichiarante non aveva nominato",
    "carta esposta dal difensore prima dell'attacco: cosa succede?",
    "il giocatore ha rinunciato a seguire il colore e poi ha vinto la presa",
    "l'arbitro è stato chiamato dopo che la dichiarazione insufficiente è stata accettata",
    "Art. 45 C 4 b: cambio di designazione involontario",
    "declarer named the queen from dummy but meant the king",
    "a defender dropped a card face up on the table",
    "revoke established, how many tricks are transferred?",
    "opening lead out of turn accepted by declarer, dummy goes down",
    "the director was not called and the players agreed a score themselves",
    "Law 64A: two tricks transferred when the offending side won the revoke trick",
    "ο αμυνόμενος έδειξε φύλλο πριν από την αντάμ",
    "ο εκτελεστής ονόμασε χαρτί από τον μορ και μετά άλλαξε γνώμη",
    "ρενόνς που εδραιώθηκε: πόσες λεβέ μεταφέρονται;",
    "ο διαιτητής καλείται όταν ένας παίκτης αποκαλύψει χαρτί ♠K",
    "Νόμος 45Γ4β: αλλαγή ονομασίας χαρτιού",
    "Il dichiarante gioca ♥A dal morto, poi dice: «no, volevo il ♥K». La carta è giocata?",
    ("Dopo l'attacco il morto scopre le sue carte; il dichiarante nomina una carta ma il morto ne gioca "
     "un'altra. L'arbitro stabilisce che la carta nominata deve essere giocata se la presa non è completata, "
     "e che nessuna penalità si applica al morto."),
    ("When a defender's card is exposed it becomes a penalty card unless the director deems otherwise; a "
     "major penalty card must be played at the first legal opportunity, and the declarer may impose lead "
     "restrictions when the defender's partner is on lead."),
    ("Όταν ένας αμυνόμενος εκθέσει χαρτί, αυτό γίνεται χαρτί ποινής· ο διαιτητής εξηγεί τις επιλογές του "
     "εκτελεστή και τις περιορισμένες αντάμ του συμπαίκτη."),
    "3NT X by South, N/S vulnerable, ♠AKQ ♥J109 ♦— ♣x",
    "UNDO? can I take back my call, partner hadn't called yet",
    "città, perché, più, È così; “Stop” ‘card’ – l’arbitro «dice»",
    "ς σ Σ τελικός ΤΕΛΙΚΟΣ ά",
]


class FastUnavailable(RuntimeError):
    """The fast encoder cannot be used here (missing package, failed export, failed check)."""


# --------------------------------------------------------------------------- cache

def onnx_dir_for(model_dir: Path) -> Path:
    """The ONNX export of a converted model: beside it, keyed by its (hash-bearing) folder name."""
    model_dir = Path(model_dir)
    return model_dir.with_name(f"{model_dir.name}-onnx{FORMAT}")


def export_report(onnx_dir: Path) -> dict | None:
    """The marker's contents (variants, cosines, timings) or None when the export is incomplete.

    The int8 variant's check is included once it has been made (see :func:`ensure_int8`)."""
    try:
        report = json.loads((Path(onnx_dir) / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if (check := _int8_check(Path(onnx_dir))) is not None:
        report.setdefault("variants", {})["onnx-int8"] = check
    return report


def _int8_check(onnx_dir: Path) -> dict | None:
    """The int8 variant's recorded check, or None when it is missing or was made by another quantiser."""
    try:
        check = json.loads((onnx_dir / INT8_MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return check if isinstance(check, dict) and check.get("format") == INT8_FORMAT else None


def ensure_onnx(model_dir: Path, reference: Callable[[list[str]], np.ndarray] | None = None,
                log: Callable[[str], None] | None = None, bert=None) -> Path:
    """The ONNX export folder of ``model_dir``, exporting it once (atomically) when missing.

    ``reference(texts)`` gives the fp32 sentence-transformers query vectors the export is checked
    against (default: load the model with sentence-transformers); ``bert``: see :func:`export`.
    Two processes exporting at once both end up with the same complete folder.
    """
    final = onnx_dir_for(model_dir)
    if export_report(final) is not None:
        return final
    root = final.parent
    root.mkdir(parents=True, exist_ok=True)
    _remove_stale_tmp(root, final.name)
    tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{final.name}-", dir=root))
    try:
        report = export(model_dir, tmp, reference=reference, log=log, bert=bert)
        (tmp / MARKER).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        if final.exists() and export_report(final) is None:
            shutil.rmtree(final, ignore_errors=True)  # incomplete folder not made by us: move it aside
        try:
            os.rename(tmp, final)
        except OSError:
            if export_report(final) is None:  # lost a race to a complete folder: fine; else fail
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return final


def _remove_stale_tmp(root: Path, name: str) -> None:
    now = time.time()
    for p in root.glob(f".tmp-{name}-*"):
        try:
            if now - p.stat().st_mtime > _STALE_TMP_S:
                shutil.rmtree(p, ignore_errors=True)
        except OSError:
            pass


# --------------------------------------------------------------------------- export

def export(model_dir: Path, out_dir: Path, reference: Callable[[list[str]], np.ndarray] | None = None,
           log: Callable[[str], None] | None = None, bert=None) -> dict:
    """Write ``encoder.onnx`` (fp32, fused) into ``out_dir``, check it; return the report.

    ``bert``: the model's already loaded transformers BertModel (e.g. sentence-transformers'
    ``model[0].auto_model``), to avoid loading the weights twice; loaded from ``model_dir`` otherwise.
    """
    log = log or (lambda msg: None)
    model_dir, out_dir = Path(model_dir), Path(out_dir)
    try:
        import onnx  # noqa: F401  (torch's exporter and the quantiser need it)
        import torch
    except ImportError as e:
        raise FastUnavailable(f"cannot export to ONNX: {e}") from e
    t0 = time.perf_counter()
    timings: dict[str, float] = {}
    raw = out_dir / "encoder.raw.onnx"
    if bert is None:
        from transformers import AutoModel

        bert = AutoModel.from_pretrained(str(model_dir), attn_implementation="eager")
    heads, hidden = bert.config.num_attention_heads, bert.config.hidden_size
    _export_graph(torch, bert, raw)
    timings["export"] = time.perf_counter() - t0

    t1 = time.perf_counter()
    fp32 = out_dir / VARIANTS["onnx"]  # the int8 variant is made on request: ensure_int8
    fused = _fuse(raw, fp32, heads, hidden)
    if fused:
        raw.unlink()
    else:
        os.replace(raw, fp32)
    timings["fuse"] = time.perf_counter() - t1

    t3 = time.perf_counter()
    if reference is None:
        reference = _st_reference(model_dir)
    prompt = query_prompt(model_dir)
    ref = np.asarray(reference(PROBE), dtype=np.float32)
    check = _check(OnnxQueryEncoder(model_dir, out_dir, "onnx"), ref, VARIANTS["onnx"], out_dir)
    log(f"onnx: cosine to fp32 sentence-transformers min {check['min_cos']:.5f} mean {check['mean_cos']:.5f}")
    timings["check"] = time.perf_counter() - t3
    return {
        "format": FORMAT, "model_dir": model_dir.name, "prompt": prompt, "fused": fused,
        "probe_texts": len(PROBE), "variants": {"onnx": check},
        "timings_s": {k: round(v, 2) for k, v in timings.items()},
        "onnxruntime": _ort_version(), "torch": torch.__version__,
    }


def _check(enc: OnnxQueryEncoder, ref: np.ndarray, fname: str, out_dir: Path) -> dict:
    """Cosines of ``enc``'s probe vectors (one run per text, and padded batches) to ``ref``."""
    one = np.concatenate([enc.encode([t]) for t in PROBE])
    batch = enc.encode(PROBE)  # padded, length-sorted batches: the same vectors up to float noise
    cos = np.concatenate([(one * ref).sum(1), (batch * ref).sum(1)])
    return {"file": fname, "min_cos": round(float(cos.min()), 6), "mean_cos": round(float(cos.mean()), 6),
            "bytes": (out_dir / fname).stat().st_size}


def ensure_int8(onnx_dir: Path, model_dir: Path, log: Callable[[str], None] | None = None) -> dict:
    """The int8 variant's check, quantising the fp32 graph once when it is missing (~10 s, no torch).

    Checked against the fp32 graph (itself within 1e-4 of sentence-transformers, see :func:`export`).
    Written beside it under a temporary name and renamed; its check file is written last.
    """
    onnx_dir, model_dir = Path(onnx_dir), Path(model_dir)
    marker = onnx_dir / INT8_MARKER
    if (check := _int8_check(onnx_dir)) is not None:
        return check
    if export_report(onnx_dir) is None:
        raise FastUnavailable(f"no ONNX export in {onnx_dir}")
    tag = f".tmp-{os.getpid()}-{time.monotonic_ns()}"
    tmp_model = onnx_dir / (VARIANTS["onnx-int8"] + tag)
    tmp_marker = onnx_dir / (INT8_MARKER + tag)
    try:
        t0 = time.perf_counter()
        try:
            fp32 = OnnxQueryEncoder(model_dir, onnx_dir, "onnx")  # calibrates SmoothQuant, then is the reference
            _quantize(onnx_dir / VARIANTS["onnx"], tmp_model, _calibration_feeds(fp32))
        except ImportError as e:
            raise FastUnavailable(f"cannot quantise: {e}") from e
        except Exception as e:  # noqa: BLE001 - a graph the quantiser can't read: the fp32 graph serves
            raise FastUnavailable(f"cannot quantise {onnx_dir / VARIANTS['onnx']}: {e}") from e
        t_q = time.perf_counter() - t0
        os.replace(tmp_model, onnx_dir / VARIANTS["onnx-int8"])
        ref = fp32.encode(PROBE)
        check = _check(OnnxQueryEncoder(model_dir, onnx_dir, "onnx-int8"), ref, VARIANTS["onnx-int8"], onnx_dir)
        check["against"] = "onnx (fp32)"
        check["format"] = INT8_FORMAT
        check["quantize_s"] = round(t_q, 2)
        tmp_marker.write_text(json.dumps(check, indent=2) + "\n", encoding="utf-8")
        os.replace(tmp_marker, marker)
        (log or (lambda m: None))(f"onnx-int8: cosine to fp32 min {check['min_cos']:.5f} mean {check['mean_cos']:.5f}")
        return check
    finally:
        for p in (tmp_model, tmp_marker):
            if p.exists():
                p.unlink()


def _export_graph(torch, model, path: Path) -> None:
    """BertModel(inputs_embeds, attention_mask) -> mean-pooled, L2-normalised (batch, hidden)."""

    class Encoder(torch.nn.Module):
        def __init__(self, bert):
            super().__init__()
            self.bert = bert

        def forward(self, inputs_embeds, attention_mask):
            h = self.bert(inputs_embeds=inputs_embeds, attention_mask=attention_mask).last_hidden_state
            m = attention_mask.unsqueeze(-1).to(h.dtype)
            v = (h * m).sum(1) / m.sum(1).clamp(min=1e-9)  # sentence-transformers' mean pooling
            return torch.nn.functional.normalize(v, p=2.0, dim=1)  # and its Normalize module

    hidden = model.config.hidden_size
    emb = torch.randn(2, 16, hidden)
    mask = torch.ones(2, 16, dtype=torch.long)
    mask[1, 9:] = 0  # trace with padding, so nothing assumes a full mask
    # Plain matmul/softmax attention: the pattern ONNX Runtime fuses into its Attention kernel.
    impl = getattr(model.config, "_attn_implementation", None)
    was_training = model.training
    if impl not in (None, "eager"):
        model.set_attn_implementation("eager")
    model.eval()
    try:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                Encoder(model), (emb, mask), str(path), input_names=["inputs_embeds", "attention_mask"],
                output_names=["embedding"], opset_version=17, do_constant_folding=True, dynamo=False,
                dynamic_axes={"inputs_embeds": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
                              "embedding": {0: "batch"}})
    finally:
        if impl not in (None, "eager"):
            model.set_attn_implementation(impl)
        model.train(was_training)


def _fuse(src: Path, dst: Path, heads: int, hidden: int) -> bool:
    """ONNX Runtime's offline BERT fusions; False (and nothing written) where they are unavailable."""
    try:
        from onnxruntime.transformers import optimizer

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            opt = optimizer.optimize_model(str(src), model_type="bert", num_heads=heads, hidden_size=hidden,
                                           opt_level=0)
            opt.save_model_to_file(str(dst))
        return True
    except Exception:  # noqa: BLE001 - the unfused graph is correct, only slower to load
        return False


def _calibration_feeds(enc: OnnxQueryEncoder) -> Iterator[dict[str, np.ndarray]]:
    """The graph's inputs for the probe set and kb/models/int8-calibration.txt (tokens and word vectors from
    ``enc``), one text per run."""
    texts = list(PROBE)
    path = Path(__file__).with_name("models") / CALIBRATION
    if path.exists():
        texts += [t for t in path.read_text(encoding="utf-8").splitlines() if t.strip() and not t.startswith("#")]
    for ids in enc.tokenizer.encode_batch([enc.prompt + t for t in texts]):
        yield {"inputs_embeds": enc.words[ids[None, :]], "attention_mask": np.ones((1, len(ids)), np.int64)}


def _quantize(src: Path, dst: Path, feeds: Iterable[dict[str, np.ndarray]] | None = None) -> None:
    """int8 weights for every matrix product, SmoothQuant-ed first (kb/smoothquant.py) when ``feeds`` are given."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    if feeds is not None:
        from .smoothquant import smooth

        smoothed = dst.with_name(dst.name + ".smooth")
        try:
            smooth(src, smoothed, feeds)
            _quantize(smoothed, dst)
        finally:
            smoothed.unlink(missing_ok=True)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # Per-channel int8 weights, 7-bit range: per-tensor scales lose too much on this model (min cosine
        # ~0.975 on the probe set), and full 8-bit weights saturate the u8*s8 pair sums of AVX2 CPUs without
        # VNNI (min ~0.989); per-channel + reduce_range gives ~0.995. Only the matrix products: the position
        # and token-type tables (Gather) gain no speed from int8, only error.
        quantize_dynamic(str(src), str(dst), weight_type=QuantType.QInt8, per_channel=True, reduce_range=True,
                         op_types_to_quantize=["MatMul", "Attention"],
                         extra_options={"DefaultTensorType": 1})  # FLOAT, for the fused ops' outputs


def _st_reference(model_dir: Path) -> Callable[[list[str]], np.ndarray]:
    def encode(texts: list[str]) -> np.ndarray:
        from sentence_transformers import SentenceTransformer

        st = SentenceTransformer(str(model_dir), device="cpu")
        return st.encode(texts, prompt=query_prompt(model_dir), batch_size=1, normalize_embeddings=True,
                         convert_to_numpy=True, show_progress_bar=False)

    return encode


def _ort_version() -> str:
    try:
        import onnxruntime

        return onnxruntime.__version__
    except ImportError:
        return "?"


def query_prompt(model_dir: Path, kind: str = "query") -> str:
    """The model's own ``query`` (or ``passage``) prompt ("query: " for E5), as sentence-transformers reads it."""
    try:
        cfg = json.loads((Path(model_dir) / "config_sentence_transformers.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    return (cfg.get("prompts") or {}).get(kind, "")


# --------------------------------------------------------------------------- run time

def _word_embeddings(model_dir: Path) -> np.ndarray:
    """The word-embedding table as a read-only memory map over ``model.safetensors`` (no copy)."""
    path = Path(model_dir) / "model.safetensors"
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
    meta = header.get(_WORD_EMB) or header.get("bert." + _WORD_EMB)
    if meta is None or meta.get("dtype") != "F32":
        raise FastUnavailable(f"{path}: no fp32 {_WORD_EMB}")
    start, end = meta["data_offsets"]
    shape = tuple(meta["shape"])
    if end - start != 4 * shape[0] * shape[1]:
        raise FastUnavailable(f"{path}: {_WORD_EMB} has an unexpected size")
    return np.memmap(path, dtype=np.float32, mode="r", offset=8 + n + start, shape=shape)


class OnnxQueryEncoder:
    """Query texts -> (n, dim) float32 unit vectors, with ONNX Runtime; one session, reused, thread-safe."""

    def __init__(self, model_dir: Path, onnx_dir: Path, variant: str = "onnx", threads: int | None = None) -> None:
        try:
            import onnxruntime as ort
            import tokenizers  # noqa: F401
        except ImportError as e:
            raise FastUnavailable(f"fast query encoder unavailable: {e}") from e
        if variant not in VARIANTS:
            raise ValueError(f"unknown query encoder {variant!r} (one of {', '.join(VARIANTS)})")
        self.variant = variant
        self.model_dir, self.onnx_dir = Path(model_dir), Path(onnx_dir)
        self.prompt = query_prompt(self.model_dir)
        self.tokenizer = QueryTokenizer(self.model_dir, MAX_TOKENS)  # the model's tokenizer.json, loaded fast
        try:
            cfg = json.loads((self.model_dir / "config.json").read_text(encoding="utf-8"))
            self.pad_id = int(cfg.get("pad_token_id") or 0)
        except (OSError, ValueError):
            self.pad_id = 0
        self.words = _word_embeddings(self.model_dir)
        self.dim = int(self.words.shape[1])
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads or cores()
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        so.log_severity_level = 3
        # A query runs ~200 small kernels; a pool thread that sleeps between them is woken ~200 times a run.
        # Spinning within a run saves that (a dev question 11.5 -> 10.5 ms alone, first-pass search p50
        # -1.1 ms alternating in one process), and stopping the spin when the run returns keeps an idle
        # process idle (0.1 ms of CPU per 0.3 s against 40 ms with spinning left on: tests/test_fast_embed.py).
        so.add_session_config_entry("session.intra_op.allow_spinning", "1")
        so.add_session_config_entry("session.force_spinning_stop", "1")
        path = self.onnx_dir / VARIANTS[variant]
        try:
            self.session = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
        except Exception as e:  # noqa: BLE001 - corrupt or foreign file: say so, the caller falls back
            raise FastUnavailable(f"cannot load {path}: {e}") from e

    def encode(self, texts: list[str], prompt: str | None = None, batch_size: int = 16,
               progress: Callable[[int, int], None] | None = None,
               running: Callable[[], None] | None = None) -> np.ndarray:
        """Unit vectors of ``prompt + text`` (default prompt: the model's query prompt). ``running()`` is
        called once the texts are read into the model's inputs, just before the model runs (and lets go of
        the GIL): see KnowledgeBase.search."""
        texts = list(texts)
        out = np.zeros((len(texts), self.dim), np.float32)
        if not texts:
            if running is not None:
                running()
            return out
        prompt = self.prompt if prompt is None else prompt
        encs = self.tokenizer.encode_batch([prompt + t for t in texts])  # one id array per text
        # A query and its expansion differ a lot in length: padding them into one batch costs more than
        # two runs. So: one run per text for a few texts, else length-sorted batches. The int8 graph
        # always runs one text at a time: its activations are quantised with a scale taken over the whole
        # batch, so a text batched with others (padding included) gets another vector than alone, and
        # the glossary's concept vectors would then depend on which of them a build happened to embed.
        order = sorted(range(len(encs)), key=lambda i: len(encs[i]))
        single = len(texts) <= SINGLE_RUNS_UP_TO or self.variant == "onnx-int8"
        step = 1 if single else max(1, batch_size)
        for a in range(0, len(order), step):
            idx = order[a:a + step]
            out[idx] = self._run([encs[i] for i in idx], running if a == 0 else None)
            if progress is not None:
                progress(min(a + step, len(order)), len(order))
        return out

    def _run(self, encs, running: Callable[[], None] | None = None) -> np.ndarray:
        n = max(len(e) for e in encs)
        ids = np.full((len(encs), n), self.pad_id, np.int64)
        mask = np.zeros((len(encs), n), np.int64)
        for i, e in enumerate(encs):
            ids[i, :len(e)] = e
            mask[i, :len(e)] = 1
        emb = self.words[ids]  # fancy indexing on the memory map: a plain (b, n, dim) float32 array
        if running is not None:
            running()
        out = self.session.run(None, {"inputs_embeds": emb, "attention_mask": mask})[0]
        return np.ascontiguousarray(out, dtype=np.float32)
