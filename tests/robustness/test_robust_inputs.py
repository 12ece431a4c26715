"""Every kind of awkward input gets a clear per-file status and message, and never stops an ingest.

One corpus holds all the inputs below next to good documents; it is ingested once through
`kb.build.build` (the reports) and once through `python -m ingest` (the printed summary and the
exit code). Each test then reads its own file's line. No model: `embed=False` / `--no-embed`.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ingest.pipeline import MAX_PASSAGE_CHARS
from kb import KnowledgeBase
from kb.build import build
from kb.store import current_generation

ROOT = Path(__file__).resolve().parents[2]

GOOD_IT = """Articolo 45 - Carta giocata

Il dichiarante gioca una carta del morto nominandola. Se nomina una carta che non è nel morto,
la nomina è nulla.
"""
GOOD_EN = """Law 46 - Incomplete or erroneous call of a card from dummy

When declarer calls a card from dummy he should clearly state both the suit and the rank.
"""
CP1252_IT = ("Il giocatore può chiedere “perché” — è un’infrazione dell’articolo 45.\n"
             "La carta nominata è giocata; l’arbitro è chiamato.\n")
LATIN1_IT = "Il morto ha giocato una carta non nominata: così dice l'articolo 45C4b. È già accaduto.\n"
GERMAN = ("Der Alleinspieler hat eine Karte vom Tisch genannt, aber dann eine andere gewollt. "
          "Gesetz 45C4b regelt, wann eine genannte Karte als gespielt gilt. Der Turnierleiter muss "
          "sofort gerufen werden, und die Spieler dürfen nicht selbst entscheiden.\n")
POLISH = ("Rozgrywający wymienił kartę ze stołu, a potem powiedział, że chodziło mu o inną. "
          "Prawo 45 mówi, kiedy karta jest uważana za zagraną. Sędzia musi zostać wezwany "
          "natychmiast, a gracze nie mogą sami rozstrzygać sporu.\n")
LONG_WORDS = ("declarer named a card from dummy and then changed his mind without pause " * 1500)

# file name -> (status, words the message or a note must contain)
EXPECTED = {
    "corrupt.pdf": ("failed", "corrupt"),
    "truncated.pdf": ("failed", "corrupt or truncated PDF"),
    "encrypted-empty-password.pdf": ("ok", "encrypted with an empty password: opened"),
    "encrypted-password.pdf": ("skipped", "encrypted"),
    "scan-no-text.pdf": ("failed", "no text layer; OCR is not supported"),
    "some-pages-bad.pdf": ("ok", "page(s) without text skipped: 2"),
    "zero.txt": ("skipped", "empty file (0 bytes)"),
    "binary.txt": ("failed", "binary content, not text"),
    "cp1252.txt": ("ok", "decoded as cp1252"),
    "latin1.txt": ("ok", "decoded as cp1252"),  # latin-1 Italian is valid cp1252: same letters
    "latin1-c1.txt": ("ok", "decoded as latin-1"),  # a byte cp1252 leaves undefined: latin-1
    "utf16.txt": ("ok", "encoding: utf-16"),
    "long-lines.txt": ("ok", ""),
    "german.txt": ("ok", ""),
    "polish.txt": ("ok", ""),
    "name with spaces.txt": ("ok", ""),
    "àccènti perché.txt": ("ok", ""),
    "Νόμος 45 σχόλια.txt": ("ok", ""),
    "good-it.txt": ("ok", ""),
    "good-en.pdf": ("ok", ""),
    "copy-a.txt": ("ok", ""),
    "copy-b.txt": ("duplicate", "same content as copy-a.txt: indexed once"),
}


def _make_corpus(d: Path, make_pdf) -> None:
    from fpdf import FPDF
    from PIL import Image
    from pypdf import PdfReader, PdfWriter

    rnd = random.Random(7)
    good = make_pdf(d / "good-en.pdf", [["Law 46B: incomplete designation of a card from dummy.",
                                         "Declarer said 'small' without naming the suit."],
                                        ["Law 46B2 applies: declarer must play the lowest card."]])
    (d / "corrupt.pdf").write_bytes(b"%PDF-1.4\n" + rnd.randbytes(30_000))
    data = good.read_bytes()
    (d / "truncated.pdf").write_bytes(data[: len(data) // 2])
    for name, password in (("encrypted-empty-password.pdf", ""), ("encrypted-password.pdf", "s3cret")):
        src = make_pdf(d.parent / f"src-{name}", [["Law 47E: retraction of a play based on misinformation."],
                                                  ["The director allows the card to be withdrawn."]])
        w = PdfWriter(clone_from=PdfReader(src))
        w.encrypt(password)
        with open(d / name, "wb") as f:
            w.write(f)
    pdf = FPDF()
    pdf.add_page()
    pdf.image(Image.new("RGB", (300, 200), (180, 180, 180)), x=20, y=20, w=150)  # a scanned page
    pdf.add_page()
    pdf.rect(20, 20, 120, 60, style="F")  # a drawing, no text
    pdf.output(str(d / "scan-no-text.pdf"))
    make_pdf(d / "some-pages-bad.pdf", [
        ["Law 45C4b: a card named by mistake may be changed.", "Declarer said the jack, then the king."],
        [],  # empty page
        ["\ufffd" * 40, "\ufffd\ufffd\ufffd \ufffd\ufffd\ufffd " * 6],  # garbled: a font without a text map
        ["Law 46B3: a card of the named suit but without rank.", "Declarer must play the lowest card."],
    ], numbers=False)
    (d / "zero.txt").write_bytes(b"")
    (d / "binary.txt").write_bytes(bytes(range(256)) * 40)
    (d / "cp1252.txt").write_bytes(CP1252_IT.encode("cp1252"))
    (d / "latin1.txt").write_bytes(LATIN1_IT.encode("latin-1"))
    (d / "latin1-c1.txt").write_bytes(LATIN1_IT.encode("latin-1") + b"Fine del testo \x81.\n")
    (d / "utf16.txt").write_bytes("Law 45: declarer plays a card from dummy by naming it.\nΝόμος 45Γ4β: "
                                  "ο εκτελεστής ονομάζει φύλλο.\n".encode("utf-16"))  # with BOM
    (d / "long-lines.txt").write_text("Law 45C4b and a very long line follow.\n" + LONG_WORDS[:100_000] + "\n"
                                      + "x" * 100_000 + "\nThe end.\n", encoding="utf-8")
    (d / "german.txt").write_text(GERMAN, encoding="utf-8")
    (d / "polish.txt").write_text(POLISH, encoding="utf-8")
    (d / "name with spaces.txt").write_text(GOOD_EN.replace("46", "47"), encoding="utf-8")
    (d / "àccènti perché.txt").write_text(GOOD_IT.replace("45", "16"), encoding="utf-8")
    (d / "Νόμος 45 σχόλια.txt").write_text("Νόμος 45Γ4β: ο εκτελεστής ονόμασε φύλλο του μορ κατά λάθος "
                                            "και αμέσως το διόρθωσε.\n", encoding="utf-8")
    (d / "good-it.txt").write_text(GOOD_IT, encoding="utf-8")
    (d / "copy-a.txt").write_text(GOOD_EN.replace("46", "41"), encoding="utf-8")
    shutil.copy(d / "copy-a.txt", d / "copy-b.txt")


@pytest.fixture(scope="module")
def ingested(tmp_path_factory, request):
    """(reports by path, the KB dir, CLI completed process, seconds the build took)."""
    # make_pdf from tests/conftest.py (pdf_factory is per test; this corpus is built once per module)
    make_pdf = request.config.pluginmanager.get_plugin(str(ROOT / "tests" / "conftest.py")).make_pdf
    base = tmp_path_factory.mktemp("inputs")
    corpus = base / "corpus"
    corpus.mkdir()
    _make_corpus(corpus, make_pdf)
    t0 = time.perf_counter()
    result = build(corpus, base / "kb", embed=False)
    seconds = time.perf_counter() - t0
    cli = subprocess.run([sys.executable, "-m", "ingest", "--corpus", str(corpus), "--kb-dir", str(base / "kb-cli"),
                          "--no-embed", "--quiet"], cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env=_env())
    return {r.path: r for r in result.reports}, base / "kb", cli, seconds


def _env():
    import os

    return dict(os.environ, PYTHONPATH=str(ROOT))


def _summary_line(cli, name: str) -> str:
    lines = [ln for ln in cli.stdout.splitlines() if ln[11:].startswith(name + ":")]
    assert len(lines) == 1, f"one summary line for {name}:\n{cli.stdout}"
    return lines[0]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_input_has_a_clear_status(ingested, name):
    reports, _kb, cli, _s = ingested
    status, words = EXPECTED[name]
    r = reports[name]
    said = " | ".join([r.message, *r.notes])
    assert r.status == status, said
    assert words in said
    line = _summary_line(cli, name)
    assert line.strip().startswith(status)
    if status != "ok":
        assert words in line
    else:
        assert r.passages > 0


def test_summary_lists_every_file_and_exit_code_is_1(ingested):
    reports, _kb, cli, _s = ingested
    assert set(reports) == set(EXPECTED)
    assert cli.returncode == 1, cli.stderr
    assert "Traceback" not in cli.stderr
    n_ok = sum(s == "ok" for s, _ in EXPECTED.values())
    assert f"{n_ok} of {len(EXPECTED)} files indexed" in cli.stdout
    n_failed = sum(s == "failed" for s, _ in EXPECTED.values())
    assert f"{n_failed} file(s) failed; the others are indexed" in cli.stdout


def test_bad_files_do_not_stop_the_rest(ingested):
    reports, kb_dir, _cli, _s = ingested
    kb = KnowledgeBase.open(kb_dir)
    docs = {d["name"]: d["passages"] for d in kb.documents()}
    assert set(docs) == {n for n, (s, _) in EXPECTED.items() if s == "ok"}
    assert all(n > 0 for n in docs.values())
    assert kb.stats().passages == sum(r.passages for r in reports.values() if r.status == "ok")


def test_encrypted_with_empty_password_is_indexed(ingested):
    _r, kb_dir, _cli, _s = ingested
    hits = KnowledgeBase.open(kb_dir).search("retraction of a play based on misinformation").hits
    assert hits and hits[0].doc == "encrypted-empty-password.pdf"


def test_good_pages_kept_bad_pages_noted(ingested):
    reports, kb_dir, _cli, _s = ingested
    r = reports["some-pages-bad.pdf"]
    assert r.pages == 4
    assert "1 page(s) without text skipped: 2" in r.notes
    assert "1 page(s) garbled skipped: 3" in r.notes
    conn = KnowledgeBase.open(kb_dir)._conn(KnowledgeBase.open(kb_dir)._gen)
    rows = conn.execute("SELECT page, page_end, text FROM passages WHERE doc = 'some-pages-bad.pdf'").fetchall()
    pages = {p for row in rows for p in (row["page"], row["page_end"]) if p}
    text = " ".join(row["text"] for row in rows)
    assert pages <= {1, 4} and "jack" in text and "lowest card" in text and "\ufffd" not in text


@pytest.mark.parametrize("name, expect", [
    ("cp1252.txt", "“perché” — è un’infrazione"),
    ("latin1.txt", "così dice l'articolo 45C4b. È già"),
    ("latin1-c1.txt", "così dice l'articolo 45C4b. È già"),
    ("utf16.txt", "ο εκτελεστής ονομάζει φύλλο"),
])
def test_fallback_decodings_give_the_right_text(ingested, name, expect):
    _r, kb_dir, _cli, _s = ingested
    kb = KnowledgeBase.open(kb_dir)
    text = " ".join(kb._conn(kb._gen).execute("SELECT text FROM passages WHERE doc = ?", (name,)).fetchone())
    assert expect in " ".join(text.split())


@pytest.mark.parametrize("name, lang", [("german.txt", "de"), ("polish.txt", "pl")])
def test_other_languages_kept_and_labelled(ingested, name, lang):
    reports, kb_dir, _cli, _s = ingested
    assert reports[name].by_lang == {lang: reports[name].passages}
    kb = KnowledgeBase.open(kb_dir)
    assert {h.lang for h in kb.search("Gesetz Turnierleiter" if lang == "de" else "Sędzia prawo").hits} >= {lang}
    assert kb.stats().by_lang.get(lang)


def test_unusual_names_are_documents(ingested):
    _r, kb_dir, cli, _s = ingested
    kb = KnowledgeBase.open(kb_dir)
    names = {d["name"] for d in kb.documents()}
    assert {"name with spaces.txt", "àccènti perché.txt", "Νόμος 45 σχόλια.txt"} <= names
    assert "Νόμος 45 σχόλια.txt" in [h.doc for h in kb.search("ονόμασε φύλλο κατά λάθος").hits]
    assert kb.search("perché nomina", doc="àccènti perché.txt").hits


def test_long_lines_are_bounded_passages(ingested):
    reports, kb_dir, _cli, seconds = ingested
    kb = KnowledgeBase.open(kb_dir)
    lengths = [len(t) for (t,) in kb._conn(kb._gen).execute(
        "SELECT text FROM passages WHERE doc = 'long-lines.txt'")]
    assert len(lengths) >= 10 and max(lengths) <= MAX_PASSAGE_CHARS  # 200,000 characters, cut
    assert sum(lengths) >= 199_000  # nothing lost
    assert seconds < 120  # the 100k-letter line alone used to take minutes (quadratic regex)
    hits = kb.search("changed his mind without pause", doc="long-lines.txt").hits
    assert hits and all(len(h.snippet) < 1000 for h in hits)


def test_duplicate_indexed_once(ingested):
    _r, kb_dir, _cli, _s = ingested
    kb = KnowledgeBase.open(kb_dir)
    docs = [h.doc for h in kb.search("Law 41 incomplete or erroneous call", k=20).hits]
    assert "copy-a.txt" in docs and "copy-b.txt" not in docs


# ------------------------------------------------------------------ exit codes and --strict

def _ingest(corpus: Path, kb_dir: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ingest", "--corpus", str(corpus), "--kb-dir", str(kb_dir),
                           "--no-embed", "--quiet", *extra], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env=_env())


def _snapshot(kb_dir: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(kb_dir)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(kb_dir.rglob("*"))}


def test_exit_0_when_all_read_and_strict_keeps_kb_untouched(tmp_path):
    corpus, kb_dir = tmp_path / "corpus", tmp_path / "kb"
    corpus.mkdir()
    (corpus / "good-it.txt").write_text(GOOD_IT, encoding="utf-8")
    (corpus / "good-en.txt").write_text(GOOD_EN, encoding="utf-8")
    (corpus / "empty.txt").write_bytes(b"")  # skipped is not a failure
    ok = _ingest(corpus, kb_dir)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "skipped  empty.txt: empty file (0 bytes)" in ok.stdout
    assert _ingest(corpus, kb_dir, "--strict").returncode == 0

    live = current_generation(kb_dir)
    before = _snapshot(kb_dir)
    (corpus / "broken.pdf").write_bytes(b"%PDF-1.4\n" + b"\x00garbage" * 500)
    (corpus / "new-doc.txt").write_text(GOOD_EN.replace("46", "47"), encoding="utf-8")
    strict = _ingest(corpus, kb_dir, "--strict")
    assert strict.returncode == 1
    assert "error: broken.pdf: corrupt" in strict.stderr and "nothing was changed (--strict)" in strict.stderr
    assert _snapshot(kb_dir) == before and current_generation(kb_dir) == live

    lenient = _ingest(corpus, kb_dir)
    assert lenient.returncode == 1
    assert "failed  broken.pdf: corrupt" in lenient.stdout
    assert "ok  new-doc.txt" in lenient.stdout and current_generation(kb_dir) != live


def test_same_name_in_two_folders_is_reported_not_fatal(tmp_path):
    corpus, kb_dir = tmp_path / "corpus", tmp_path / "kb"
    (corpus / "a").mkdir(parents=True)
    (corpus / "b").mkdir()
    (corpus / "a" / "notes.txt").write_text(GOOD_IT, encoding="utf-8")
    (corpus / "b" / "notes.txt").write_text(GOOD_EN, encoding="utf-8")
    (corpus / "other.txt").write_text(GERMAN, encoding="utf-8")
    res = build(corpus, kb_dir, embed=False)
    by = {r.path: r for r in res.reports}
    assert by["a/notes.txt"].status == "ok" and by["other.txt"].status == "ok"
    assert by["b/notes.txt"].status == "failed" and "same file name as a/notes.txt" in by["b/notes.txt"].message
    assert res.generation is not None
    strict = _ingest(corpus, tmp_path / "kb2", "--strict")
    assert strict.returncode == 1 and "same file name" in strict.stderr
    assert not (tmp_path / "kb2" / "CURRENT").exists()


def test_missing_corpus_is_exit_2(tmp_path):
    res = _ingest(tmp_path / "nope", tmp_path / "kb")
    assert res.returncode == 2 and "corpus folder not found" in res.stderr
    assert not (tmp_path / "kb").exists()


# ------------------------------------------------------------------ AES-encrypted PDFs

@pytest.mark.parametrize("name", ["aes256-empty-password.pdf", "aes128-empty-password.pdf"])
def test_aes_encrypted_pdf_with_empty_password(tmp_path, name):
    """Most "secured" PDFs are AES-encrypted with an empty user password (an owner password only).
    pypdf reads them with the optional `cryptography` package; without it the file is reported as
    needing that package (it used to be called corrupt). The fixtures were made with pypdf +
    cryptography from a two-page make_pdf document."""
    import importlib.util

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    shutil.copy(Path(__file__).with_name("data") / name, corpus / name)
    r = build(corpus, tmp_path / "kb", embed=False).reports[0]
    if importlib.util.find_spec("cryptography"):
        assert r.status == "ok" and "encrypted with an empty password: opened" in r.notes
    else:
        assert r.status == "failed"
        assert r.message.startswith("encrypted PDF (AES): reading it needs the 'cryptography' package")
