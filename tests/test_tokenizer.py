"""The query tokenizer's vocabulary subset: the same ids as the full tokenizer, always; the full one
for any text the subset cannot tokenize exactly; a file made once, remade when unreadable."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from kb import tokenizer as qtok

ROOT = Path(__file__).resolve().parents[1]


def _tiny(tmp_path: Path) -> Path:
    """A unigram tokenizer.json of eight pieces, two of them Cyrillic (outside the subset's ranges),
    the lowest-scoring piece among them, with <s> ... </s> around every text."""
    from tokenizers import AddedToken, Tokenizer, models, normalizers, processors
    from tokenizers import pre_tokenizers as pre

    vocab = [("<s>", 0.0), ("</s>", 0.0), ("<unk>", 0.0), ("▁ab", -1.0), ("▁б", -2.0), ("a", -3.0), ("b", -3.5),
             ("бв", -30.0), ("▁", -4.0)]
    tok = Tokenizer(models.Unigram(vocab, unk_id=2, byte_fallback=False))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend(" ")])
    tok.pre_tokenizer = pre.Metaspace(replacement="▁", prepend_scheme="never", split=False)
    tok.post_processor = processors.TemplateProcessing(single="<s> $A </s>", special_tokens=[("<s>", 0), ("</s>", 1)])
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in ("<s>", "</s>", "<unk>")])
    d = tmp_path / "model"
    d.mkdir()
    tok.save(str(d / "tokenizer.json"))
    return d


def test_subset_keeps_pieces_in_range_specials_and_the_lowest_score(tmp_path):
    spec = json.loads((_tiny(tmp_path) / "tokenizer.json").read_text(encoding="utf-8"))
    sub, ids = qtok.subset_spec(spec)
    assert [spec["model"]["vocab"][i][0] for i in ids] == ["<s>", "</s>", "<unk>", "▁ab", "a", "b", "бв", "▁"]
    assert sub["model"]["vocab"] == [spec["model"]["vocab"][i] for i in ids]
    assert sub["post_processor"]["special_tokens"]["</s>"]["ids"] == [1] and sub["model"]["unk_id"] == 2
    assert qtok.subset_spec({"model": {"type": "BPE"}}) is None


def test_subset_ids_are_the_full_ids_and_other_scripts_go_to_the_full_tokenizer(tmp_path):
    d = _tiny(tmp_path)
    qt = qtok.QueryTokenizer(d, 512)
    assert (d / qtok.SUBSET_FILE).exists() and qt.subset is not None
    full = qt.full()
    qt._full = None
    [ab] = qt.encode_batch(["ab ab a"])
    assert ab.tolist() == full.encode("ab ab a").ids and qt._full is None  # the full vocabulary never loaded
    assert not qt.fits("бв")
    [cyr] = qt.encode_batch(["ab бв"])
    assert cyr.tolist() == full.encode("ab бв").ids and qt._full is not None


def test_unreadable_subset_file_is_made_again_and_a_read_only_folder_still_works(tmp_path, monkeypatch):
    d = _tiny(tmp_path)
    (d / qtok.SUBSET_FILE).write_text('{"format": 1, "tok', encoding="utf-8")  # a crash mid-write (not ours)
    qt = qtok.QueryTokenizer(d, 512)
    assert qt.subset is not None and json.loads((d / qtok.SUBSET_FILE).read_text(encoding="utf-8"))["format"] == 1
    (d / qtok.SUBSET_FILE).unlink()

    def refuse(*a, **k):
        raise PermissionError("read-only")

    monkeypatch.setattr(qtok.tempfile, "mkstemp", refuse)  # a write that fails all the same: kept in memory
    qt = qtok.QueryTokenizer(d, 512)
    assert qt.subset is not None and not (d / qtok.SUBSET_FILE).exists()
    assert qt.encode_batch(["ab"])[0].tolist() == qt.full().encode("ab").ids
    monkeypatch.setattr(qtok.os, "access", lambda path, mode: False)  # a read-only folder: the full tokenizer
    qt = qtok.QueryTokenizer(d, 512)
    assert qt.subset is None and qt.encode_batch(["ab"])[0].tolist() == qt.full().encode("ab").ids


def test_a_subset_that_disagrees_with_the_full_tokenizer_is_not_used(tmp_path, monkeypatch):
    d = _tiny(tmp_path)
    real = qtok.subset_spec

    def wrong(spec):
        sub, ids = real(spec)
        return sub, ids[:3] + ids[4:] + ids[3:4]  # ids mapped to the wrong pieces
    monkeypatch.setattr(qtok, "subset_spec", wrong)
    monkeypatch.setattr(qtok, "PROBE", ["ab"])
    qt = qtok.QueryTokenizer(d, 512)
    assert qt.subset is None and not (d / qtok.SUBSET_FILE).exists()
    assert qt.encode_batch(["ab"])[0].tolist() == qt.full().encode("ab").ids


@pytest.mark.slow
def test_the_models_subset_gives_the_full_ids(tmp_path):
    """On e5's own 250k-piece tokenizer: every corpus line and thousands of random strings of the subset's
    scripts tokenize exactly as with the full vocabulary, as queries and as passages."""
    from kb.embed import e5_model_dir

    model = e5_model_dir()
    d = tmp_path / "model"
    d.mkdir()
    (d / "tokenizer.json").write_bytes((model / "tokenizer.json").read_bytes())
    qt = qtok.QueryTokenizer(d, 512)
    assert qt.subset is not None and len(qt.ids) < 0.6 * qt.full().get_vocab_size()
    texts = [line for f in sorted((ROOT / "corpus").glob("*.txt"))
             for line in f.read_text(encoding="utf-8").splitlines() if line.strip()]
    rng = random.Random(7)
    alphabet = [chr(c) for a, b in qtok.RANGES for c in range(a, b + 1)]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40))) for _ in range(2000)]
    texts += ["4444", "''''", "aaaaaaa", "♠AKQ ♥J10 ♦— ♣xx", "Νόμος 45Γ4β", "ΕΚΤΕΛΕΣΤΗΣ", "ça, où, Straße"]
    full = qt.full()
    fitted = 0
    for text in texts:
        for s in ("query: " + text, "passage: " + text):
            fitted += qt.fits(s)
            assert qt.encode_batch([s])[0].tolist() == full.encode(s).ids, s
    assert fitted > 0.95 * 2 * len(texts)  # nearly all through the subset: it is what is being checked
    long = "carta " * 2000
    assert len(qt.encode_batch([long])[0]) == 512  # truncated like the model
    assert np.array_equal(qt.encode_batch(["query: Привет, мир"])[0], full.encode("query: Привет, мир").ids)
