"""Fit a low-rank adapter (LoRA) of e5-small so that a director's question lands near the passages about
the law that decides it, in any language; write it in the form kb/e5convert.py merges.

Objective: for each training question, a softmax over the batch's passages (all of its positives, i.e.
the passages whose explicit tags are about a gold law section, else about the gold law, plus random
others), with all of its positives in the numerator. Both questions and passages go through the adapted
model, as they do at search time. The glossary's terms join a share of each batch as short questions.
Scored on the evaluation questions (dense retrieval only) every ``every`` steps.

    python train/fit.py pack.safetensors '{"r": 16, "lr": 5e-4, "steps": 800, "gloss": 0.25}' --out td-adapter.safetensors

Needs numpy, torch and transformers; ~90 s on one H100, hours on 2 CPU cores (train/README.md).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from kb.e5convert import _Q4_BLOCK, dequant_q4_0, state_dict  # noqa: E402
from kb.evaluate import relevant  # noqa: E402

TARGETS = ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense",
           "intermediate.dense", "output.dense")


class LoRA(nn.Module):
    """``base(x) + s * B(A(x))``, B starting at zero: training starts from the plain model."""

    def __init__(self, base: nn.Linear, r: int, alpha: float) -> None:
        super().__init__()
        self.base, self.s = base, alpha / r
        self.A = nn.Parameter(torch.randn(r, base.in_features) / math.sqrt(base.in_features))
        self.B = nn.Parameter(torch.zeros(base.out_features, r))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.base(x) + (x @ self.A.T @ self.B.T) * self.s


class Pack:
    def __init__(self, path: Path) -> None:
        from safetensors import safe_open
        from safetensors.numpy import load_file

        self.z = load_file(str(path))
        with safe_open(str(path), "np") as f:
            self.meta = json.loads(f.metadata()["meta"])
        self.ids, self.offs = self.z["ids"], self.z["offs"]
        self.n_pass, self.n_train = self.meta["n_pass"], self.meta["n_train"]
        cfg = self.meta["config"]  # what e5convert.state_dict reads of a model file
        self.hidden, self.layers, self.ffn = self.meta["hidden"], self.meta["layers"], self.meta["ffn"]
        self.vocab_size, self.max_positions, self.type_vocab = (cfg["vocab_size"], cfg["max_position_embeddings"],
                                                                cfg["type_vocab_size"])

    def tensor(self, name: str) -> np.ndarray:
        """Like :meth:`kb.e5convert.E5File.tensor`, on the pack's (vocabulary-trimmed) copy of the file."""
        if "q4:" + name in self.z:
            return dequant_q4_0(self.z["q4:" + name].view(_Q4_BLOCK))
        return self.z["f32:" + name]

    def seq(self, i: int) -> np.ndarray:
        return self.ids[self.offs[i]:self.offs[i + 1]]


def base_model(pk: Pack):
    from transformers import BertConfig, BertModel

    meta = pk.meta
    cfg = BertConfig(**{k: v for k, v in meta["config"].items() if k not in ("architectures", "torch_dtype", "dtype")})
    cfg.hidden_dropout_prob = cfg.attention_probs_dropout_prob = 0.0
    cfg._attn_implementation = "sdpa"  # no [batch, heads, L, L] attention matrices kept for backward
    m = BertModel(cfg, add_pooling_layer=False)
    sd = {k: torch.from_numpy(v.copy()) for k, v in state_dict(pk).items() if not k.startswith("pooler.")}
    missing, unexpected = m.load_state_dict(sd, strict=False)
    assert not unexpected and all("position_ids" in k for k in missing), (missing, unexpected)
    for p in m.parameters():
        p.requires_grad_(False)
    return m


def add_lora(m: nn.Module, r: int, alpha: float) -> dict[str, LoRA]:
    mods = {}
    for name, mod in list(m.named_modules()):
        if isinstance(mod, nn.Linear) and ".layer." in name and name.endswith(TARGETS):
            parent, attr = name.rsplit(".", 1)
            mods[name] = LoRA(mod, r, alpha)
            setattr(m.get_submodule(parent), attr, mods[name])
    return mods


def embed(m: nn.Module, pk: Pack, idx: list[int], dev: str, bs: int = 256) -> torch.Tensor:
    """Mean-pooled, normalised vectors (sentence-transformers' pooling for e5)."""
    out = []
    pad = pk.meta["config"]["pad_token_id"]
    for k in range(0, len(idx), bs):
        seqs = [pk.seq(i) for i in idx[k:k + bs]]
        x = np.full((len(seqs), max(map(len, seqs))), pad, np.int64)
        a = np.zeros_like(x)
        for j, s in enumerate(seqs):
            x[j, :len(s)], a[j, :len(s)] = s, 1
        x, a = torch.from_numpy(x).to(dev), torch.from_numpy(a).to(dev)
        with torch.autocast(dev, dtype=torch.bfloat16, enabled=dev == "cuda"):
            hs = m(input_ids=x, attention_mask=a).last_hidden_state.float()
        out.append(F.normalize((hs * a[..., None]).sum(1) / a.sum(1, keepdim=True), dim=-1))
    return torch.cat(out)


def positives(plaws: list[list[str]], gold: list[str]) -> list[int]:
    for depth in ("section", "law"):
        pos = [j for j, laws in enumerate(plaws) if any(relevant(t, g, depth) for t in laws for g in gold)]
        if pos:
            return pos
    return []


def evaluate(m: nn.Module, pk: Pack, plaws: list[list[str]], dev: str) -> dict[str, tuple[float, float, float]]:
    """Dense-only section R@5, law R@5 and section MRR@10 per evaluation set and pooled (ALL)."""
    m.eval()
    ev = pk.meta["evals"]
    with torch.no_grad():
        P = embed(m, pk, list(range(pk.n_pass)), dev)
        Q = embed(m, pk, list(range(pk.n_pass + pk.n_train, pk.n_pass + pk.n_train + len(ev))), dev)
        top = (Q @ P.T).argsort(dim=1, descending=True)[:, :10].cpu().numpy()
    m.train()
    sums: dict[str, list[float]] = {}
    for r, order in zip(ev, top, strict=True):
        s, law = (next((k for k, j in enumerate(order, 1)
                        if any(relevant(t, g, depth) for t in plaws[j] for g in r["gold"])), None)
                  for depth in ("section", "law"))
        for key in (r["set"], "ALL"):
            acc = sums.setdefault(key, [0, 0, 0, 0.0])
            acc[0] += 1
            acc[1] += s is not None and s <= 5
            acc[2] += law is not None and law <= 5
            acc[3] += 1 / s if s else 0.0
    return {k: (round(v[1] / v[0], 3), round(v[2] / v[0], 3), round(v[3] / v[0], 3)) for k, v in sums.items()}


def fit(pk: Pack, c: dict, dev: str, log=print) -> tuple[dict[str, np.ndarray], dict]:
    torch.manual_seed(c.get("seed", 0))
    rng = np.random.default_rng(c.get("seed", 0))
    plaws = [p["laws"] for p in pk.meta["passages"]]
    pos = [positives(plaws, r["gold"]) for r in pk.meta["train"]]
    asked = [i for i, p in enumerate(pos) if p and pk.meta["train"][i]["set"] != "gloss"]
    gloss = [i for i, p in enumerate(pos) if p and pk.meta["train"][i]["set"] == "gloss"]
    m = base_model(pk).to(dev)
    hist = {0: evaluate(m, pk, plaws, dev)}
    log(f"questions {len(asked)}, glossary terms {len(gloss)}, passages {pk.n_pass}; step 0: {hist[0]['ALL']}")
    mods = add_lora(m, c["r"], c.get("alpha", 2 * c["r"]))
    m.to(dev)
    opt = torch.optim.AdamW([p for lo in mods.values() for p in (lo.A, lo.B)], lr=c["lr"], weight_decay=c.get("wd", 0.01))
    steps, batch, tau = c["steps"], c.get("batch", 64), c.get("tau", 0.02)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1, (s + 1) / 30) * max(0.0, 1 - s / steps))
    t0 = time.time()
    for step in range(1, steps + 1):
        ng = int(batch * c.get("gloss", 0.0))
        qb = rng.choice(asked, size=min(batch - ng, len(asked)), replace=False).tolist()
        qb += rng.choice(gloss, size=ng, replace=False).tolist() if ng else []
        need = sorted({j for i in qb for j in pos[i]})
        rest = np.setdiff1d(np.arange(pk.n_pass), need)
        pidx = need + sorted(rng.choice(rest, size=min(len(rest), c.get("negs", 64)), replace=False).tolist())
        col = {j: k for k, j in enumerate(pidx)}
        S = embed(m, pk, [pk.n_pass + i for i in qb], dev) @ embed(m, pk, pidx, dev, bs=len(pidx)).T / tau
        mask = torch.zeros_like(S, dtype=torch.bool)
        for row, i in enumerate(qb):
            mask[row, [col[j] for j in pos[i]]] = True
        loss = (torch.logsumexp(S, 1) - torch.logsumexp(S.masked_fill(~mask, -1e4), 1)).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if step % c.get("every", 100) == 0 or step == steps:
            hist[step] = evaluate(m, pk, plaws, dev)
            log(f"step {step} loss {loss.item():.3f} dense-only {hist[step]['ALL']} {time.time() - t0:.0f}s")
    adapter = {}
    for name, lo in mods.items():
        adapter[f"{name}.A"] = lo.A.detach().float().cpu().numpy().astype(np.float16)
        adapter[f"{name}.B"] = (lo.B.detach().float().cpu().numpy() * lo.s).astype(np.float16)
    return adapter, hist


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="train/fit.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("pack", type=Path)
    ap.add_argument("configs", help='a JSON object or list of them: {"r", "lr", "steps", "gloss", ...}')
    ap.add_argument("--out", type=Path, required=True, help="adapter file (one config) or folder (several)")
    a = ap.parse_args(argv)
    configs = json.loads(a.configs)
    configs = configs if isinstance(configs, list) else [configs]
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    pk = Pack(a.pack)
    report = {}
    for i, c in enumerate(configs):
        adapter, hist = fit(pk, c, dev, log=lambda s, i=i: print(f"[{i}] {s}", flush=True))
        path = a.out if len(configs) == 1 else a.out / f"adapter{i}.safetensors"
        path.parent.mkdir(parents=True, exist_ok=True)
        from safetensors.numpy import save_file

        save_file(adapter, str(path))
        report[str(i)] = {"config": c, "hist": hist, "file": str(path)}
        (path.parent / "fit-report.json").write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
