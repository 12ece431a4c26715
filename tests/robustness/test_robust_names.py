"""Hostile file names: the ingest only reads the corpus and only writes under --kb-dir.

A temporary root holds the corpus, the knowledge-base folder, a bystander folder and the working
directory; everything outside the knowledge-base folder is listed (name, size, content hash, mtime)
before and after `python -m ingest`, and must not change. The knowledge-base folder is also seeded
with traps for the garbage collector: symbolic links named like a generation or a build folder
that point at the bystander folder.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

HOSTILE = [
    "a\\..\\..\\outside.txt",
    "-rf --kb-dir=.. .txt",
    "$(touch PWNED).txt",
    "`touch PWNED2`.txt",
    "a; rm -rf ~.txt",
    "line\nbreak.txt",
    "\x1b[31mred\x1b[0m.txt",
    "%s%n%x {0} {.__class__}.txt",
    "CON.txt",
    "' OR 1=1; DROP TABLE passages; --.txt",
    "catalog.toml.txt",
    "x" * 240 + ".txt",
    "\u202eevil\u202dtxt.pdf.txt",
]


def _listing(root: Path, skip: Path) -> dict[str, tuple]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        d = Path(dirpath)
        if d == skip or skip in d.parents:
            dirnames[:] = []
            continue
        for name in dirnames + filenames:
            p = d / name
            if p == skip:
                continue
            st = p.lstat()
            digest = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() and not p.is_symlink() else ""
            out[os.fsdecode(p.relative_to(root))] = (st.st_size, st.st_mtime_ns, digest, p.is_symlink())
    return out


def test_hostile_names_write_nothing_outside_kb_dir(tmp_path):
    root = tmp_path
    corpus, kb_dir, bystander, cwd = root / "corpus", root / "kb", root / "bystander", root / "cwd"
    for d in (corpus, kb_dir, bystander, cwd):
        d.mkdir()
    (bystander / "precious.txt").write_text("do not touch")
    (bystander / "PID").write_text("999999999")
    for i, name in enumerate(HOSTILE):
        (corpus / name).write_text(f"Law {40 + i}: a document with an odd name, number {i}.\n", encoding="utf-8")
    bad = os.path.join(os.fsencode(corpus), b"caf\xe9 latin-1 name.txt")  # not UTF-8
    with open(bad, "wb") as f:
        f.write(b"Law 64: a document whose name is not valid UTF-8.\n")
    (corpus / "sub").mkdir()
    (corpus / "sub" / ".." / "sub" / "nested.txt").write_text("Law 65: nested document.\n")
    os.symlink(bystander, kb_dir / "gen-00000000-000000-aaaaaa")  # GC must not empty it
    os.symlink(bystander, kb_dir / ".building-trap")  # dead "PID" inside: GC must not follow it
    before = _listing(root, kb_dir)

    env = dict(os.environ, PYTHONPATH=str(ROOT), HOME=str(cwd))
    res = subprocess.run([sys.executable, "-m", "ingest", "--corpus", str(corpus), "--kb-dir", str(kb_dir),
                          "--no-embed", "--quiet"], cwd=cwd, capture_output=True, env=env, timeout=300)
    out = res.stdout.decode("utf-8", "replace")
    assert res.returncode == 1, out + res.stderr.decode("utf-8", "replace")  # the non-UTF-8 name failed
    assert b"Traceback" not in res.stderr

    after = _listing(root, kb_dir)
    assert after == before
    assert not list(root.rglob("PWNED*")) and not (Path.home() / "PWNED").exists()
    assert (bystander / "precious.txt").read_text() == "do not touch"
    assert {p.name for p in kb_dir.iterdir() if not p.is_symlink()} >= {"CURRENT"}
    for p in kb_dir.iterdir():  # the knowledge base holds only its own things
        assert p.name in ("CURRENT", ".build.lock") or p.name.startswith(("gen-", ".building-")), p.name

    # every name has its one-line status; control characters are shown escaped
    assert "failed  caf\ufffd latin-1 name.txt: file name is not valid UTF-8" in out
    assert "line\\nbreak.txt" in out and "\x1b" not in out
    body = out.splitlines()
    assert sum(ln[11:].startswith(("sub/nested.txt:",)) for ln in body) == 1
    assert f"{len(HOSTILE) + 1} of {len(HOSTILE) + 2} files indexed" in out


def test_hostile_names_are_searchable_documents(tmp_path):
    from kb import KnowledgeBase
    from kb.build import build

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i, name in enumerate(HOSTILE):
        (corpus / name).write_text(f"Law {40 + i}: a document with an odd name, number {i}.\n", encoding="utf-8")
    res = build(corpus, tmp_path / "kb", embed=False)
    assert {r.path: r.status for r in res.reports} == {n: "ok" for n in HOSTILE}
    kb = KnowledgeBase.open(tmp_path / "kb")
    assert {d["name"] for d in kb.documents()} == set(HOSTILE)
    hit = kb.search("' OR 1=1; DROP TABLE passages; --").hits  # a query, not SQL
    assert isinstance(hit, list) and kb.stats().passages == len(HOSTILE)
