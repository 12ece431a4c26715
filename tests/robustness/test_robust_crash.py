"""A real ingest process killed with SIGKILL at five points leaves the previous knowledge base
intact and answering exactly as before; the next ingest completes and cleans the leftovers.

Each case: build a small knowledge base in-process (generation A), change the corpus, start
`crash_runner.py` (a real `kb.build.build` in another process) that freezes at the chosen point,
SIGKILL it, then check A byte for byte and query for query, then ingest again.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from crash_runner import FakeEmbedder

from kb import KnowledgeBase
from kb.build import build
from kb.store import current_generation

ROOT = Path(__file__).resolve().parents[2]
RUNNER = Path(__file__).with_name("crash_runner.py")

IT = """Articolo 45 - Carta giocata

Il dichiarante gioca una carta del morto nominandola. Se il dichiarante nomina una carta
che non è nel morto, la nomina è nulla e può nominare un'altra carta.

Esempio 1
Il dichiarante dice "fante" e poi "oops, il re". Si applica l'articolo 45C4b: la carta nominata
per errore può essere cambiata se non c'è stata pausa per riflettere.
"""
EN = """Law 46 - Incomplete or erroneous call of a card from dummy

When declarer calls a card from dummy he should clearly state both the suit and the rank.
Law 46B applies when the designation is incomplete or erroneous.

Example 2
Declarer says "small" without naming a suit; the director applies Law 46B2.
"""
EXTRA = """Law 47 - Retraction of a card played

A card once played may be withdrawn only as permitted by Law 47. A defender's card played
after an opponent's change of call may be withdrawn without penalty (Law 47D).
"""
QUERIES = ["dummy card named by mistake", "Law 46B", "il dichiarante nomina una carta", "carta giocata 45C4b"]


def _answers(kb: KnowledgeBase) -> list[list[tuple[str, float]]]:
    return [[(h.id, h.score) for h in kb.search(q, k=5).hits] for q in QUERIES]


def _tree(path: Path) -> dict[str, str]:
    return {str(p.relative_to(path)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(path.rglob("*")) if p.is_file()}


def _kill_at(point: str, corpus: Path, kb_dir: Path, embedder: str, tmp: Path) -> None:
    marker = tmp / f"marker-{point}"
    env = dict(os.environ, PYTHONPATH=str(ROOT), TOKENIZERS_PARALLELISM="false")
    proc = subprocess.Popen([sys.executable, str(RUNNER), str(corpus), str(kb_dir), point, str(marker),
                             "--embedder", embedder], cwd=tmp, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + (240 if embedder == "real" else 90)
        while not marker.exists():
            if proc.poll() is not None:
                pytest.fail(f"runner exited ({proc.returncode}) before reaching '{point}':\n"
                            f"{proc.stdout.read().decode(errors='replace')[-3000:]}")
            if time.monotonic() > deadline:
                pytest.fail(f"runner did not reach '{point}' in time")
            time.sleep(0.05)
        assert int(marker.read_text()) == proc.pid
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)  # reaped: its pid no longer counts as a live builder
        proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL


@pytest.mark.parametrize("point, embedder", [
    ("load", "fake"),
    ("embed", "real"),  # the real model, really interrupted in the middle of encoding
    ("store", "fake"),
    ("index", "fake"),
    ("swap", "fake"),
])
def test_sigkill_leaves_previous_kb_intact(tmp_path, point, embedder):
    corpus, kb_dir = tmp_path / "corpus", tmp_path / "kb"
    corpus.mkdir()
    (corpus / "it_lezione.txt").write_text(IT, encoding="utf-8")
    (corpus / "en_notes.txt").write_text(EN, encoding="utf-8")
    fake = FakeEmbedder()
    first = build(corpus, kb_dir, embedder=fake)
    assert first.generation and not first.failed
    gen_a = current_generation(kb_dir)
    files_a = _tree(gen_a)
    current_a = (kb_dir / "CURRENT").read_bytes()
    live = KnowledgeBase.open(kb_dir, embedder=fake)
    before = _answers(live)
    assert any(before), "the queries find something in the small knowledge base"

    # the ingest to be killed has real work to do: one changed and one new document
    (corpus / "en_notes.txt").write_text(EN + "\nA second paragraph, added later.\n", encoding="utf-8")
    (corpus / "en_law47.txt").write_text(EXTRA, encoding="utf-8")
    _kill_at(point, corpus, kb_dir, embedder, tmp_path)

    # the previous knowledge base: same CURRENT, same files, same answers (open and already open)
    assert (kb_dir / "CURRENT").read_bytes() == current_a
    assert current_generation(kb_dir) == gen_a
    assert _tree(gen_a) == files_a
    reopened = KnowledgeBase.open(kb_dir, embedder=fake)
    assert reopened.stats().generation == gen_a.name
    assert _answers(reopened) == before
    assert live.refresh() is False and _answers(live) == before

    # what the kill left behind, by point: a half-built folder, or a complete generation never made live
    building = list(kb_dir.glob(".building-*"))
    gens = sorted(p.name for p in kb_dir.glob("gen-*"))
    if point == "load":
        assert building == [] and gens == [gen_a.name]  # nothing is written before loading ends
    elif point == "swap":
        assert building == [] and len(gens) == 2
    else:
        assert len(building) == 1 and gens == [gen_a.name]

    # the next ingest completes normally, goes live and cleans the half-built folder
    again = build(corpus, kb_dir, embedder=fake)
    assert again.generation is not None and not again.failed
    assert {r.path: r.status for r in again.reports} == {
        "en_law47.txt": "ok", "en_notes.txt": "ok", "it_lezione.txt": "unchanged"}
    assert current_generation(kb_dir) == again.generation
    assert not list(kb_dir.glob(".building-*"))
    after = KnowledgeBase.open(kb_dir, embedder=fake)
    assert any("en_law47.txt" == h.doc for h in after.search("Law 47 retraction of a card played").hits)
    assert live.refresh() is True and _answers(live) == _answers(after)
