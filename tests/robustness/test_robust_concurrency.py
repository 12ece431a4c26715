"""Queries in several threads while an ingest rebuilds the same knowledge base and `refresh()` is
called: every answer comes wholly from the old or wholly from the new generation, never an error.

The old generation is the session's default-corpus knowledge base (copied); the new one is built
from the same documents under new file names, so every passage id differs between the two (ids
hash the document name) while every vector is reused (same text): the rebuild is a real one,
through every write path, without minutes of embedding.
"""

from __future__ import annotations

import shutil
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from kb import KnowledgeBase
from kb.build import build
from kb.store import current_generation

pytestmark = pytest.mark.slow  # uses the session knowledge base built with the embedding model

ROOT = Path(__file__).resolve().parents[2]
QUERIES = [
    "declarer called the jack from dummy, then said oops, the king",
    "il morto ha giocato una carta non nominata",
    "ο αμυνόμενος έδειξε φύλλο",
    "45C4b",
    "Law 46B",
    "card exposed by a defender during the auction",
    "carta nominata per errore",
    "revoke established",
    "dummy touched a card",
    "art. 47 E",
]
THREADS, PER_THREAD = 4, 30


def _ids(gen: Path) -> set[str]:
    con = sqlite3.connect(f"file:{gen / 'kb.sqlite'}?mode=ro", uri=True)
    try:
        return {r[0] for r in con.execute("SELECT id FROM passages")}
    finally:
        con.close()


def test_queries_during_rebuild_see_one_generation(built_kb, tmp_path):
    kb_dir = tmp_path / "kb"
    kb_dir.mkdir()
    old_gen = current_generation(built_kb)
    shutil.copytree(old_gen, kb_dir / old_gen.name)
    shutil.copy(built_kb / "CURRENT", kb_dir / "CURRENT")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for f in (ROOT / "corpus").iterdir():
        if f.name != "catalog.toml":
            shutil.copy(f, corpus / f"v2-{f.name}")
    catalog = (ROOT / "corpus" / "catalog.toml").read_text(encoding="utf-8")
    (corpus / "catalog.toml").write_text(catalog.replace('file = "', 'file = "v2-'), encoding="utf-8")

    old_ids = _ids(kb_dir / old_gen.name)
    kb = KnowledgeBase.open(kb_dir)
    kb.search("warm up the model")  # the model is loaded once, before the race starts

    answers: list[tuple[str, set[str]]] = []
    errors: list[BaseException] = []
    done = threading.Event()
    lock = threading.Lock()
    built: dict = {}

    def rebuild() -> None:
        try:
            built["result"] = build(corpus, kb_dir)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)
        finally:
            done.set()

    def ask(n: int) -> None:
        i = after = 0
        try:
            # 30 queries each, and on until the rebuild is over and 5 more were asked after it
            while i < PER_THREAD or after < 5:
                if done.is_set():
                    if after == 0:
                        kb.refresh()
                    after += 1
                q = QUERIES[(n + i) % len(QUERIES)]
                res = kb.search(q, k=8)
                ids = {h.id for h in res.hits} | {a.id for h in res.hits for a in h.also_in}
                with lock:
                    answers.append((q, ids))
                if i % 7 == n:
                    kb.refresh()
                i += 1
                if i > 2000:
                    raise AssertionError("the rebuild never finished")
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    def refresher() -> None:
        while not done.is_set():
            kb.refresh()
            time.sleep(0.02)
        kb.refresh()

    threads = [threading.Thread(target=ask, args=(n,)) for n in range(THREADS)]
    threads += [threading.Thread(target=rebuild), threading.Thread(target=refresher)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    assert not errors, errors

    result = built["result"]
    assert result.generation and not result.failed and result.reused_vectors == result.passages
    new_ids = _ids(result.generation)
    assert current_generation(kb_dir) == result.generation
    assert old_ids and new_ids and not old_ids & new_ids, "the two generations share no passage id"

    assert len(answers) >= THREADS * PER_THREAD
    seen = {"old": 0, "new": 0}
    for q, ids in answers:
        assert ids, f"no hits for {q!r}"
        if ids <= old_ids:
            seen["old"] += 1
        elif ids <= new_ids:
            seen["new"] += 1
        else:
            pytest.fail(f"answer to {q!r} mixes generations: {len(ids & old_ids)} old ids, "
                        f"{len(ids & new_ids)} new ids, {len(ids - old_ids - new_ids)} unknown")
    assert seen["old"] and seen["new"], seen  # both sides of the swap were really exercised
    assert kb.stats().generation == result.generation.name
