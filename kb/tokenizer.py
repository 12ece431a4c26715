"""Token ids for the query encoder without loading the whole vocabulary: the slowest part of a cold start.

`tokenizers` builds the unigram model of e5's 250,002 XLM-R pieces in ~1.0 s (1.45 s with the file's
JSON), more than ONNX Runtime needs for the whole network. Yet unigram Viterbi only ever looks at
pieces that are substrings of the (normalised) text. So the pieces made only of the characters of the
scripts a director writes in (Latin, Greek, punctuation, card suits: :data:`RANGES`, ~115k pieces)
give exactly the ids of the full vocabulary for every text whose normalised characters all lie in
those ranges; that model builds in ~0.3 s. Any other text (Cyrillic, Chinese, an emoji...) goes to
the full tokenizer, loaded the first time one comes.

Exact, not approximate: the subset keeps the piece with the lowest score (the unknown-character
cost is derived from it), every special token, and the normaliser and pre-tokeniser unchanged; its
ids are mapped back to the full vocabulary's. It is written once beside ``tokenizer.json``
(atomically) after agreeing with the full tokenizer on a probe set, and is refused, the full one
used, if it ever does not. In a read-only model folder the full tokenizer serves (making the subset
takes ~3 s: worth it once, not in every process).
"""

from __future__ import annotations

import json
import logging
import os
import re
import tempfile
import threading
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

SUBSET_FILE = "tokenizer-subset.json"
FORMAT = 1
# Basic Latin .. Latin Extended-B, IPA, spacing and combining marks, Greek and Coptic, Greek Extended,
# general punctuation, currency, letterlike symbols, arrows, mathematical operators, miscellaneous
# symbols (♠♥♦♣), SentencePiece's ▁. Four characters here normalise to others outside: those texts go
# to the full tokenizer, as the check on the normalised text makes sure.
RANGES = ((0x20, 0x7E), (0xA0, 0x3FF), (0x1F00, 0x1FFF), (0x2000, 0x206F), (0x20A0, 0x20CF),
          (0x2100, 0x22FF), (0x2581, 0x2581), (0x2600, 0x26FF))
PROBE = [
    "query: il morto ha giocato una carta che il dichiarante non aveva nominato",
    "query: declarer called the jack from dummy, then said \"oops, the king\" — 45C4(b)?",
    "query: ο αμυνόμενος έδειξε φύλλο πριν από την αντάμ; Νόμος 45Γ4β",
    "query: L'adversaire a joué ♠K après une renonce… ½ levée, 50 € d'amende",
    "query: Der Alleinspieler hat aus dem Dummy »Pik-Dame« verlangt; ¿renuncio establecido?",
    "passage: ART. 64 - PROCEDURA DOPO UNA RENONCE ACCERTATA\nA. Rettifica delle prese ≥ 2 ♥♦♣",
]


def _outside(ranges=RANGES) -> re.Pattern:
    body = "".join(f"\\U{a:08X}-\\U{b:08X}" for a, b in ranges)
    return re.compile(f"[^{body}]")


_OUTSIDE = _outside()


class QueryTokenizer:
    """``encode_batch(texts) -> list of id arrays`` of the model's tokenizer, truncated to ``max_tokens``.

    Uses the subset vocabulary when every text fits it, else the full one (loaded on first need)."""

    def __init__(self, model_dir: Path, max_tokens: int) -> None:
        self.model_dir = Path(model_dir)
        self.max_tokens = max_tokens
        self._full = None
        self._lock = threading.Lock()
        self.subset, self.ids = self._open_subset()

    # ------------------------------------------------------------ use
    def encode_batch(self, texts: list[str]) -> list[np.ndarray]:
        if self.subset is not None and all(self.fits(t) for t in texts):
            return [self.ids[e.ids] for e in self.subset.encode_batch(texts)]
        return [np.asarray(e.ids, np.int64) for e in self.full().encode_batch(texts)]

    def fits(self, text: str) -> bool:
        """Whether the subset gives this text's exact ids: all its normalised characters are in RANGES."""
        norm = self.subset.normalizer
        return _OUTSIDE.search(norm.normalize_str(text) if norm is not None else text) is None

    def full(self):
        with self._lock:
            if self._full is None:
                from tokenizers import Tokenizer

                self._full = _configured(Tokenizer.from_file(str(self.model_dir / "tokenizer.json")), self.max_tokens)
            return self._full

    # ------------------------------------------------------------ the subset file
    def _open_subset(self):
        from tokenizers import Tokenizer

        path = self.model_dir / SUBSET_FILE
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
            if doc.get("format") == FORMAT and doc.get("ranges") == [list(r) for r in RANGES]:
                return _configured(Tokenizer.from_str(doc["tokenizer"]), self.max_tokens), np.asarray(doc["ids"], np.int64)
        except FileNotFoundError:
            if not os.access(self.model_dir, os.W_OK):  # it could not be kept: making it each time costs 3 s
                return None, None
        except Exception as e:  # noqa: BLE001 - a bad file (truncated, foreign, old) is made again
            log.warning("%s unreadable (%s): making it again", path, e)
        return self._make_subset(path)

    def _make_subset(self, path: Path):
        from tokenizers import Tokenizer

        try:
            spec = json.loads((self.model_dir / "tokenizer.json").read_text(encoding="utf-8"))
            made = subset_spec(spec)
        except (OSError, ValueError, KeyError) as e:
            log.warning("no subset tokenizer for %s: %s", self.model_dir, e)
            return None, None
        if made is None:  # not a unigram model: nothing to gain
            return None, None
        sub_spec, ids = made
        sub_json = json.dumps(sub_spec)
        sub = _configured(Tokenizer.from_str(sub_json), self.max_tokens)
        ids = np.asarray(ids, np.int64)
        full = self.full()
        for text in PROBE:
            if list(ids[sub.encode(text).ids]) != full.encode(text).ids:
                log.warning("the subset tokenizer disagrees with the full one on %r: not used", text)
                return None, None
        doc = {"format": FORMAT, "ranges": [list(r) for r in RANGES], "ids": ids.tolist(),
               "tokenizer": sub_json}
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{SUBSET_FILE}.", dir=self.model_dir)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(doc, f)
            os.replace(tmp, path)
        except OSError as e:  # a read-only cache: this process still uses it
            log.warning("cannot write %s: %s", path, e)
        return sub, ids


def subset_spec(spec: dict) -> tuple[dict, list[int]] | None:
    """A tokenizer.json (as a dict) keeping only the unigram pieces made of characters in RANGES, plus
    every special token and the lowest-scoring piece; and the full id of each kept piece."""
    model = spec.get("model") or {}
    if model.get("type") != "Unigram":
        return None
    vocab = model["vocab"]
    specials = {t["id"] for t in spec.get("added_tokens", [])}
    lowest = min(range(len(vocab)), key=lambda i: vocab[i][1])
    keep = [i for i, (piece, _) in enumerate(vocab)
            if i in specials or i == lowest or _OUTSIDE.search(piece) is None]
    new = {old: n for n, old in enumerate(keep)}
    out = json.loads(json.dumps(spec))  # a deep copy
    out["model"]["vocab"] = [vocab[i] for i in keep]
    if model.get("unk_id") is not None:
        out["model"]["unk_id"] = new[model["unk_id"]]
    for t in out.get("added_tokens", []):
        t["id"] = new[t["id"]]
    for tok in ((out.get("post_processor") or {}).get("special_tokens") or {}).values():
        tok["ids"] = [new[i] for i in tok["ids"]]
    return out, keep


def _configured(tok, max_tokens: int):
    tok.no_padding()
    tok.enable_truncation(max_tokens)
    return tok
