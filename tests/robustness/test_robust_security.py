"""Nothing loaded from disk is unpickled or evaluated; the FAISS index goes through FAISS's own format."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]

# Looked for in code only (comments and strings removed first, so "Nothing is pickled" in a
# docstring does not count). `model.eval()` (torch's train/eval switch) and `cmd_eval(` are fine.
FORBIDDEN = {
    "pickle": re.compile(r"\b(c?[Pp]ickle|dill|cloudpickle|joblib|shelve|marshal)\b"),
    "torch.load": re.compile(r"\btorch\s*\.\s*load\b"),
    "eval(": re.compile(r"(?<![\w.])eval\s*\("),
    "exec(": re.compile(r"(?<![\w.])exec\s*\("),
    "yaml.load": re.compile(r"\byaml\s*\.\s*(load|unsafe_load|full_load)\b"),
    "allow_pickle": re.compile(r"\ballow_pickle\b"),
    "read_pickle": re.compile(r"\bread_pickle\b"),
    "__import__": re.compile(r"(?<![\w.])__import__\s*\("),
}


def project_files() -> list[Path]:
    files = sorted((ROOT / "ingest").rglob("*.py")) + sorted((ROOT / "kb").rglob("*.py"))
    if (ROOT / "app.py").exists():
        files.append(ROOT / "app.py")
    return files


def code_only(source: str) -> str:
    """The source with comments and string literals blanked out (layout kept, so `model.eval()`
    still reads as a method call)."""
    lines = source.splitlines(keepends=True)
    blank = {tokenize.COMMENT, tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", -1)}
    for tok in reversed(list(tokenize.generate_tokens(io.StringIO(source).readline))):
        if tok.type not in blank:
            continue
        (r0, c0), (r1, c1) = tok.start, tok.end
        if r0 == r1:
            ln = lines[r0 - 1]
            lines[r0 - 1] = ln[:c0] + " " * (c1 - c0) + ln[c1:]
        else:
            lines[r0 - 1] = lines[r0 - 1][:c0] + "\n"
            for r in range(r0, r1 - 1):
                lines[r] = "\n"
            lines[r1 - 1] = " " * c1 + lines[r1 - 1][c1:]
    return "".join(lines)


def calls_by_name(source: str) -> set[str]:
    """Names called as plain functions (eval(...), exec(...)), found by parsing, not by text."""
    return {n.func.id for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}


def test_grep_finds_no_unpickling_or_eval():
    files = project_files()
    assert len(files) > 10
    found = []
    for f in files:
        code = code_only(f.read_text(encoding="utf-8"))
        for what, pattern in FORBIDDEN.items():
            if pattern.search(code):
                found.append(f"{f.relative_to(ROOT)}: {what}")
        for name in calls_by_name(f.read_text(encoding="utf-8")) & {"eval", "exec", "__import__", "compile"}:
            found.append(f"{f.relative_to(ROOT)}: {name}() call")
    assert not found, "unsafe deserialisation or evaluation:\n" + "\n".join(found)


def test_grep_self_check():
    """The patterns do catch the real thing and ignore the harmless look-alikes."""
    bad = "import pickle\nx = torch.load(p)\ny = eval(s)\nexec(c)\nyaml.load(f)\nnp.load(f, allow_pickle=True)\n"
    code = code_only(bad)
    assert all(p.search(code) for p in FORBIDDEN.values() if p.pattern not in (
        FORBIDDEN["read_pickle"].pattern, FORBIDDEN["__import__"].pattern))
    fine = code_only('"""Nothing is pickled."""\nmodel.eval()\ndef cmd_eval(a): pass  # eval( here\n'
                     "yaml.safe_load(f)\n")
    assert not any(p.search(fine) for p in FORBIDDEN.values())
    assert calls_by_name("eval(x)\nexec(y)\nmodel.eval()\ncmd_eval(z)\n") == {"eval", "exec", "cmd_eval"}


def test_faiss_written_and_read_with_faiss_own_functions():
    src = (ROOT / "kb" / "store.py").read_text(encoding="utf-8")
    code = code_only(src)
    assert re.search(r"faiss\s*\.\s*write_index\s*\(", code)
    assert re.search(r"faiss\s*\.\s*read_index\s*\(", code)
    for f in project_files():
        c = code_only(f.read_text(encoding="utf-8"))
        assert not re.search(r"serialize_index|deserialize_index|np\s*\.\s*load\s*\(", c), f


def test_a_generation_holds_only_json_sqlite_and_faiss(tmp_path):
    import faiss
    from crash_runner import FakeEmbedder

    from kb.build import build

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.txt").write_text("Law 45C4b: a card named by mistake may be changed at once.\n\n"
                                  "Law 46B: incomplete designation of a card from dummy.\n", encoding="utf-8")
    res = build(corpus, tmp_path / "kb", embedder=FakeEmbedder())
    gen = res.generation
    # (PID: the builder's process id, the marker that tells a live build folder from an abandoned one)
    assert {p.name for p in gen.iterdir()} - {"PID"} == {"kb.sqlite", "manifest.json", "vectors.faiss"}
    assert gen.joinpath("kb.sqlite").read_bytes()[:16] == b"SQLite format 3\x00"
    index = faiss.read_index(str(gen / "vectors.faiss"))
    assert index.ntotal == res.passages and index.d == FakeEmbedder.dim
    import sqlite3

    con = sqlite3.connect(gen / "kb.sqlite")
    for (blob,) in con.execute("SELECT vec FROM vectors"):
        assert len(blob) == 4 * FakeEmbedder.dim and np.isfinite(np.frombuffer(blob, dtype=np.float32)).all()
