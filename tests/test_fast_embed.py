"""The ONNX query encoder: same vectors as sentence-transformers (within the documented bound), an
export that lands once and atomically in the model cache, and a torch fallback whenever ONNX
Runtime is missing or the check fails. Timings are measured by bench/run.py, never asserted here."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from kb import embed, fastembed

ROOT = Path(__file__).resolve().parents[1]

SENTENCES = [
    "il morto ha giocato una carta che il dichiarante non aveva nominato",
    "Dopo la rinuncia accertata, quante prese passano alla linea non colpevole?",
    "declarer pulled the wrong card from dummy and wants to change it",
    "a defender's card was exposed before the opening lead",
    "ο αμυνόμενος έδειξε φύλλο πριν από την αντάμ",
    "ο εκτελεστής ονόμασε λάθος χαρτί από τον μορ",
]


# --------------------------------------------------------------------------- fakes (fast)

def _fake_export(calls: list, min_cos: float = 1.0):
    def export(model_dir, out_dir, reference=None, log=None, bert=None):
        calls.append(Path(out_dir))
        (Path(out_dir) / "encoder.onnx").write_bytes(b"onnx")
        return {"format": fastembed.FORMAT, "variants": {"onnx": {"file": "encoder.onnx", "min_cos": min_cos}}}

    return export


def test_export_lands_beside_the_model_once(tmp_path, monkeypatch):
    calls: list = []
    monkeypatch.setattr(fastembed, "export", _fake_export(calls))
    model_dir = tmp_path / "multilingual-e5-small-abc-f1"
    model_dir.mkdir()
    first = fastembed.ensure_onnx(model_dir)
    assert first == tmp_path / f"{model_dir.name}-onnx{fastembed.FORMAT}"
    mtime = (first / fastembed.MARKER).stat().st_mtime_ns
    assert fastembed.ensure_onnx(model_dir) == first  # cached: no second export
    assert len(calls) == 1 and (first / fastembed.MARKER).stat().st_mtime_ns == mtime
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([model_dir.name, first.name])  # no temp left
    assert fastembed.export_report(first)["variants"]["onnx"]["min_cos"] == 1.0
    assert calls[0].parent == tmp_path and calls[0].name.startswith(".tmp-")  # written aside, then renamed


def test_crashed_export_leaves_nothing_and_leftovers_do_not_break(tmp_path, monkeypatch):
    model_dir = tmp_path / "m-f1"
    model_dir.mkdir()

    def crash(model_dir, out_dir, reference=None, log=None, bert=None):
        (Path(out_dir) / "encoder.onnx").write_bytes(b"half")
        raise KeyboardInterrupt

    monkeypatch.setattr(fastembed, "export", crash)
    with pytest.raises(KeyboardInterrupt):
        fastembed.ensure_onnx(model_dir)
    assert [p.name for p in tmp_path.iterdir()] == [model_dir.name]

    # What a killed process leaves: an old temp folder, a fresh one (maybe another exporter at work), and a
    # final-named folder without the marker.
    final = fastembed.onnx_dir_for(model_dir)
    old, fresh = tmp_path / f".tmp-{final.name}-old", tmp_path / f".tmp-{final.name}-fresh"
    for d in (old, fresh, final):
        d.mkdir()
        (d / "encoder.onnx").write_bytes(b"half")
    os.utime(old, (time.time() - 2 * fastembed._STALE_TMP_S,) * 2)
    calls: list = []
    monkeypatch.setattr(fastembed, "export", _fake_export(calls))
    assert fastembed.ensure_onnx(model_dir) == final
    assert fastembed.export_report(final) is not None and (final / "encoder.onnx").read_bytes() == b"onnx"
    assert len(calls) == 1 and not old.exists() and fresh.exists()


def test_unreadable_marker_means_incomplete(tmp_path):
    d = tmp_path / "x-onnx1"
    d.mkdir()
    (d / fastembed.MARKER).write_text("{not json")
    assert fastembed.export_report(d) is None


class _FakeST:
    """Stands in for STEmbedder (no model load): records that the torch path was taken."""

    def __init__(self, model, name=None):
        self.model, self.name, self.dim, self.query_encoder = model, name, 384, "torch"


@pytest.fixture
def fake_torch_path(tmp_path, monkeypatch):
    monkeypatch.setattr(embed, "e5_model_dir", lambda cache_dir=None: tmp_path / "model")
    monkeypatch.setattr(embed, "STEmbedder", _FakeST)
    monkeypatch.setattr(embed, "_init_torch", lambda: None)
    embed._load.cache_clear()
    yield
    embed._load.cache_clear()


def test_missing_onnxruntime_falls_back_to_torch(fake_torch_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import onnxruntime -> ImportError
    monkeypatch.delenv("KB_QUERY_ENCODER", raising=False)
    e = embed.get_embedder()
    assert isinstance(e, _FakeST) and e.name == embed.default_model_name()


def test_env_torch_never_touches_onnx(fake_torch_path, monkeypatch):
    monkeypatch.setattr(embed, "FastEmbedder", lambda *a, **k: pytest.fail("ONNX path taken"))
    monkeypatch.setenv("KB_QUERY_ENCODER", "torch")
    assert isinstance(embed.get_embedder(), _FakeST)


def test_failed_check_falls_back_to_torch(fake_torch_path, monkeypatch):
    calls: list = []
    monkeypatch.setattr(fastembed, "export", _fake_export(calls, 0.97))
    monkeypatch.setattr(embed.FastEmbedder, "passages", lambda self: pytest.fail("no model load for a cached export"))
    fastembed.ensure_onnx(embed.e5_model_dir())
    monkeypatch.delenv("KB_QUERY_ENCODER", raising=False)
    assert isinstance(embed.get_embedder(), _FakeST)
    assert len(calls) == 1


def test_int8_is_made_once_on_request(tmp_path, monkeypatch):
    model_dir = tmp_path / "m-f1"
    model_dir.mkdir()
    monkeypatch.setattr(fastembed, "export", _fake_export([]))
    onnx_dir = fastembed.ensure_onnx(model_dir)
    assert "onnx-int8" not in fastembed.export_report(onnx_dir)["variants"]
    made = []

    def quantize(src, dst, feeds=None):
        assert feeds is not None  # calibration texts for SmoothQuant
        made.append(Path(dst))
        Path(dst).write_bytes(b"int8")

    class Enc:
        def __init__(self, model_dir, onnx_dir, variant, threads=None):
            self.variant = variant

        def encode(self, texts):
            v = np.ones((len(texts), 4), np.float32) / 2
            if self.variant == "onnx-int8":
                v[:, 0] += 0.01
                v /= np.linalg.norm(v, axis=1, keepdims=True)
            return v

    monkeypatch.setattr(fastembed, "_quantize", quantize)
    monkeypatch.setattr(fastembed, "OnnxQueryEncoder", Enc)
    check = fastembed.ensure_int8(onnx_dir, model_dir)
    assert 0.99 < check["min_cos"] < 1 and check["against"] == "onnx (fp32)"
    assert fastembed.ensure_int8(onnx_dir, model_dir) == check and len(made) == 1  # cached
    assert made[0].parent == onnx_dir and made[0].name != "encoder.int8.onnx"  # written aside, then renamed
    assert sorted(p.name for p in onnx_dir.iterdir()) == sorted(
        ["encoder.onnx", "encoder.int8.onnx", fastembed.MARKER, fastembed.INT8_MARKER])
    assert fastembed.export_report(onnx_dir)["variants"]["onnx-int8"] == check
    # A copy made by an older quantiser is not used, and is made again
    (onnx_dir / fastembed.INT8_MARKER).write_text(json.dumps({**check, "format": fastembed.INT8_FORMAT - 1}))
    assert "onnx-int8" not in fastembed.export_report(onnx_dir)["variants"]
    assert fastembed.ensure_int8(onnx_dir, model_dir)["format"] == fastembed.INT8_FORMAT and len(made) == 2


@pytest.mark.parametrize("quantiser_works", [True, False])
def test_auto_mode_makes_int8_or_keeps_fp32(fake_torch_path, monkeypatch, quantiser_works):
    """By default the int8 copy is made on first use and serves queries once its check passes; a
    quantiser that fails leaves the fp32 graph serving (asked for explicitly, int8 never falls to fp32)."""
    monkeypatch.setattr(fastembed, "export", _fake_export([]))
    fastembed.ensure_onnx(embed.e5_model_dir())

    def quantize(src, dst, feeds=None):
        if not quantiser_works:
            raise RuntimeError("unsupported graph")
        Path(dst).write_bytes(b"int8")

    class Enc:
        def __init__(self, model_dir, onnx_dir, variant, threads=None):
            self.variant, self.dim = variant, 4

        def encode(self, texts):
            return np.ones((len(texts), 4), np.float32) / 2

    monkeypatch.setattr(fastembed, "_quantize", quantize)
    monkeypatch.setattr(fastembed, "OnnxQueryEncoder", Enc)
    monkeypatch.delenv("KB_QUERY_ENCODER", raising=False)
    e = embed.get_embedder()
    want = "onnx-int8" if quantiser_works else "onnx"
    assert isinstance(e, embed.FastEmbedder) and e.query_encoder == want and e.queries.variant == want
    if not quantiser_works:
        embed._load.cache_clear()
        monkeypatch.setenv("KB_QUERY_ENCODER", "onnx-int8")
        assert isinstance(embed.get_embedder(), _FakeST)


def test_variant_choice():
    ok = {"onnx": {"min_cos": 1.0}, "onnx-int8": {"min_cos": 0.995}}
    assert embed._choose_variant("auto", ok) == embed.AUTO_ORDER[0]
    assert embed._choose_variant("onnx", ok) == "onnx"
    assert embed._choose_variant("onnx-int8", ok) == "onnx-int8"
    bad_int8 = {"onnx": {"min_cos": 1.0}, "onnx-int8": {"min_cos": 0.9}}
    assert embed._choose_variant("auto", bad_int8) == "onnx"
    assert embed._choose_variant("onnx-int8", bad_int8) == "onnx-int8"  # explicit: used, with a warning
    with pytest.raises(fastembed.FastUnavailable):
        embed._choose_variant("auto", {"onnx": {"min_cos": 0.9}, "onnx-int8": {"min_cos": 0.9}})
    with pytest.raises(fastembed.FastUnavailable):
        embed._choose_variant("onnx-fp16", ok)


def test_safetensors_word_embeddings_are_mapped_not_copied(tmp_path):
    from safetensors.numpy import save_file

    w = np.arange(12, dtype=np.float32).reshape(4, 3)
    save_file({"embeddings.word_embeddings.weight": w, "x": np.ones(5, np.float32)}, str(tmp_path / "model.safetensors"))
    m = fastembed._word_embeddings(tmp_path)
    assert isinstance(m, np.memmap) and np.array_equal(m[[2, 0]], w[[2, 0]])


# --------------------------------------------------------------------------- real model

@pytest.fixture(scope="module")
def fast():
    """The default embedder (exports into the model cache on first use; KB_MODEL_CACHE is honoured)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("KB_QUERY_ENCODER", raising=False)
        e = embed.get_embedder()
    if not isinstance(e, embed.FastEmbedder):
        pytest.skip("ONNX Runtime unavailable here: the torch path is used")
    return e


@pytest.mark.slow
def test_queries_match_sentence_transformers(fast):
    ref = fast.passages().encode_queries(SENTENCES)  # fp32 sentence-transformers, the index's own model
    onnx_dir = fastembed.onnx_dir_for(fast._model_dir)
    fastembed.ensure_int8(onnx_dir, fast._model_dir)  # made once per model cache (~10 s)
    report = fastembed.export_report(onnx_dir)
    for variant in fastembed.VARIANTS:
        enc = fastembed.OnnxQueryEncoder(fast._model_dir, onnx_dir, variant)
        passed = report["variants"][variant]["min_cos"] >= fastembed.MIN_COSINE[variant]
        for vecs in (enc.encode(SENTENCES), np.concatenate([enc.encode([s]) for s in SENTENCES])):
            assert vecs.dtype == np.float32 and vecs.shape == (len(SENTENCES), 384)
            assert np.allclose(np.linalg.norm(vecs, axis=1), 1, atol=1e-5)
            cos = (vecs * ref).sum(1)
            print(variant, passed, np.round(cos, 5).tolist())
            # A variant that failed its check on the probe set may fail here too, but is never chosen (below).
            assert cos.min() >= fastembed.MIN_COSINE[variant] - 1e-4 or not passed, (variant, cos)
        # int8 with SmoothQuant (kb/smoothquant.py): 0.9885 with the adapter; 0.957 without SmoothQuant
        assert report["variants"][variant]["min_cos"] >= 0.98
        assert passed or fast.query_encoder != variant
    got = fast.encode_queries(SENTENCES)
    assert ((got * ref).sum(1)).min() >= fastembed.MIN_COSINE[fast.query_encoder] - 1e-4


@pytest.mark.slow
def test_int8_vector_does_not_depend_on_its_batch(fast):
    """int8 activations are quantised per run: a text must get the vector it gets alone, whatever it is
    embedded with (the glossary's concept vectors are embedded many at a time, a query alone)."""
    onnx_dir = fastembed.onnx_dir_for(fast._model_dir)
    fastembed.ensure_int8(onnx_dir, fast._model_dir)
    enc = fastembed.OnnxQueryEncoder(fast._model_dir, onnx_dir, "onnx-int8")
    many = SENTENCES + ["carta " * 60, "x"] * (fastembed.SINGLE_RUNS_UP_TO + 1)
    together = enc.encode(many, batch_size=16)
    alone = np.concatenate([enc.encode([t]) for t in SENTENCES])
    assert np.array_equal(together[:len(SENTENCES)], alone)


@pytest.mark.slow
def test_embedder_contract_and_cache(fast):
    assert fast is embed.get_embedder()
    assert fast.name == embed.default_model_name() and fast.dim == 384
    assert fast.query_encoder in fastembed.VARIANTS
    assert fast.encode_queries([]).shape == (0, 384)
    a = fast.encode_queries(SENTENCES[:2])
    b = fast.encode_queries([SENTENCES[1], "x", SENTENCES[0]])  # two from the cache, one new
    assert np.array_equal(a[0], b[2]) and np.array_equal(a[1], b[0])
    long = fast.encode_queries(["carta " * 2000])  # truncated to 512 tokens like sentence-transformers
    assert long.shape == (1, 384) and np.isfinite(long).all()


@pytest.mark.slow
def test_embedder_says_when_its_model_starts(fast):
    """``running`` is called once a call, before its vectors exist: when the model starts, or at once for
    texts all in the cache (a search waits for it before going on beside the model)."""
    assert fast.signals_running
    text = "il morto ha giocato una carta, poi un'altra"
    for texts in ([text], [text], []):  # new, cached, nothing
        seen: list[str] = []
        out = fast.encode_queries(texts, running=functools.partial(seen.append, "running"))
        assert seen == ["running"] and out.shape == (len(texts), 384)


@pytest.mark.slow
def test_query_threads_stop_spinning_when_a_run_returns(fast):
    """The query session spins between its kernels (faster) but not after a run: an idle process stays idle
    (an app waiting for the next question must not burn a core; spinning left on costs ~40 ms per 0.3 s)."""
    code = ("import resource, time; from kb.embed import get_embedder; e = get_embedder(); "
            "cpu = lambda: sum(resource.getrusage(resource.RUSAGE_SELF)[:2]); idle = 0.0\n"
            "for i in range(5):\n"
            "    e.encode_queries([f'il morto ha giocato una carta {i}']); c = cpu(); time.sleep(0.3); idle += cpu() - c\n"
            "print(round(idle / 5 * 1000, 1))")
    out = _run_default_embedder(code)
    assert float(out.split()[-1]) < 10.0, out  # CPU ms per 0.3 s of idling


@pytest.mark.slow
def test_query_path_imports_no_torch(fast):
    """A process that only searches never imports torch, transformers or sentence-transformers."""
    code = ("import sys; from kb.embed import get_embedder; e = get_embedder(); "
            "v = e.encode_queries(['il morto ha giocato una carta']); "
            "bad = [m for m in ('torch', 'transformers', 'sentence_transformers') if m in sys.modules]; "
            "print(type(e).__name__, v.shape, bad)")
    out = _run_default_embedder(code)
    assert out.strip() == "FastEmbedder (1, 384) []", out


def _run_default_embedder(code: str) -> str:
    """`code` in a fresh process with the default query encoder; its stdout."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("KB_QUERY_ENCODER", None)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


@pytest.mark.slow
def test_export_report_is_complete(fast):
    report = fastembed.export_report(fastembed.onnx_dir_for(fast._model_dir))
    assert report["format"] == fastembed.FORMAT and report["prompt"] == "query: "
    assert "onnx" in report["variants"] and set(report["variants"]) <= set(fastembed.VARIANTS)
    json.dumps(report)


@pytest.mark.slow
def test_passages_through_onnx_by_default(fast, monkeypatch):
    """The fp32 graph gives the passage vectors sentence-transformers gives (KB_PASSAGE_ENCODER=torch)."""
    monkeypatch.setenv("KB_PASSAGE_ENCODER", "torch")
    ref = fast.encode_passages(SENTENCES)
    monkeypatch.delenv("KB_PASSAGE_ENCODER")
    seen = []
    got = fast.encode_passages(SENTENCES * 2, batch_size=4, progress=lambda d, t: seen.append((d, t)))
    assert seen[-1] == (12, 12) and len(seen) == 3
    assert np.abs(got[:6] - ref).max() < 1e-5 and np.abs(got[6:] - ref).max() < 1e-5


def test_missing_onnx_package_falls_back_to_the_loaded_model(tmp_path, monkeypatch):
    """No `onnx` to export with: the model the export had loaded serves queries too (loaded once)."""
    model_dir = tmp_path / "model"
    monkeypatch.setattr(embed, "e5_model_dir", lambda cache_dir=None: model_dir)
    loaded = []

    class ST(_FakeST):
        def __init__(self, model, name=None):
            super().__init__(model, name)
            loaded.append(self)
            self.model = [type("T", (), {"auto_model": object()})()]

        def encode_queries(self, texts):
            return np.zeros((len(texts), 384), np.float32)

    monkeypatch.setattr(embed, "STEmbedder", ST)
    monkeypatch.setattr(embed, "_init_torch", lambda: None)
    monkeypatch.setitem(sys.modules, "onnx", None)
    monkeypatch.delenv("KB_QUERY_ENCODER", raising=False)
    embed._load.cache_clear()
    try:
        e = embed.get_embedder()
    finally:
        embed._load.cache_clear()
    assert isinstance(e, ST) and loaded == [e]
    assert not fastembed.onnx_dir_for(model_dir).exists() and not list(tmp_path.glob(".tmp-*"))
