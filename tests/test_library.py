"""Uploads: hostile names, content sniffing, size cap, atomic no-clobber writes, and the ingest step."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import kb.build
import kb.library as library
from ingest.model import FileReport
from kb.build import BuildResult
from kb.library import (
    MAX_UPLOAD_BYTES,
    UploadError,
    ingest_upload,
    safe_filename,
    save_upload,
    sniff,
)

PDF = b"%PDF-1.4\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n"
TEXT = "Art. 45 C 4 b — il dichiarante può cambiare una designazione involontaria.\n".encode()


# --------------------------------------------------------------------------------------------- names

@pytest.mark.parametrize("name, expected", [
    ("../x.pdf", "x.pdf"),
    ("../../../../etc/x.pdf", "x.pdf"),
    ("/etc/passwd", "passwd"),
    ("C:\\x\\y.pdf", "y.pdf"),
    ("C:y.pdf", "y.pdf"),
    ("\\\\server\\share\\z.txt", "z.txt"),
    ("..", "upload"),
    ("", "upload"),
    ("   ", "upload"),
    (".bashrc", "bashrc"),
    ("...hidden.txt", "hidden.txt"),
    ("my notes on law 45.txt", "my_notes_on_law_45.txt"),
    ("Σχόλια στους Νόμους 45–47.pdf", "Σχόλια_στους_Νόμους_45_47.pdf"),
    ("Carte giocate e non – Artt. 45·46·47.PDF", "Carte_giocate_e_non_Artt._45_46_47.pdf"),
    ("perché è così.md", "perché_è_così.md"),
    ("a\x00b\x1f\x7fc.txt", "abc.txt"),
    ("line\nbreak.txt", "linebreak.txt"),
    ("x.pdf\u202e", "x.pdf"),  # right-to-left override dropped
    ("CON.txt", "CON_.txt"),
    ("<script>alert(1)</script>.txt", "script.txt"),
    ("<b>bold (1).txt", "b_bold_1.txt"),
    ("a..b.txt", "a.b.txt"),
])
def test_safe_filename(name, expected):
    assert safe_filename(name) == expected


def test_safe_filename_decomposed_accents_are_composed():
    assert safe_filename("perche\u0301.txt") == "perché.txt"


def test_safe_filename_long_names_keep_their_extension():
    out = safe_filename("a" * 500 + ".pdf")
    assert len(out) == 120 and out.endswith(".pdf")
    greek = safe_filename("Ω" * 300 + ".txt")
    assert greek.endswith(".txt") and len(greek) <= 120 and len(greek.encode()) <= 240
    cjk = safe_filename("漢" * 300 + ".md")
    assert cjk.endswith(".md") and len(cjk.encode()) <= 240


@pytest.mark.parametrize("name", ["../x.pdf", "/etc/passwd", "C:\\x\\y.pdf", "", ".", "..", "/", "\\", ".pdf",
                                  "a/../../b", "\x00", "-" * 10, "._-"])
def test_safe_filename_is_always_a_plain_visible_name(name):
    out = safe_filename(name)
    assert out and not out.startswith(".") and "/" not in out and "\\" not in out and ".." not in out
    assert out == os.path.basename(out) and out not in (".", "..")


# --------------------------------------------------------------------------------------------- content

def test_sniff_by_content():
    assert sniff(PDF) == "pdf"
    assert sniff(b"\n\n" + PDF) == "pdf"  # junk before the header, as readers allow
    assert sniff(TEXT) == "text"
    assert sniff("Νόμος 45Γ4β\n".encode("utf-16")) == "text"  # BOM + NUL bytes: fine for UTF-16
    assert sniff(b"\xef\xbb\xbfciao\n") == "text"
    assert sniff("perché così\n".encode("cp1252")) == "text"


@pytest.mark.parametrize("data", [
    b"",
    b"abc\x00def",
    bytes(range(256)) * 4,
    os.urandom(4096),
    b"\xff\xfe" + b"\x00\xd8" * 10,  # UTF-16 BOM, then unpaired surrogates
    b"\x01\x02\x03\x04" * 100,  # control characters, no NUL
])
def test_sniff_refuses_binary_with_a_sentence(data):
    with pytest.raises(UploadError) as e:
        sniff(data)
    msg = str(e.value)
    assert msg[0].isupper() and msg.endswith(".")


# --------------------------------------------------------------------------------------------- saving

def test_save_writes_inside_the_corpus(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name in ("../x.pdf", "/etc/passwd.pdf", "C:\\x\\y.pdf", "../../escape.pdf"):
        path = save_upload(corpus, name, PDF)
        assert path.parent == corpus.resolve() and path.read_bytes() == PDF
    assert not (tmp_path / "x.pdf").exists() and not (tmp_path / "escape.pdf").exists()
    assert sorted(p.name for p in corpus.iterdir()) == ["escape.pdf", "passwd.pdf", "x.pdf", "y.pdf"]
    assert oct(path.stat().st_mode & 0o777) == "0o644"


def test_save_names_greek_accents_spaces_and_missing_extension(tmp_path):
    assert save_upload(tmp_path, "Σχόλια Νόμος 45.pdf", PDF).name == "Σχόλια_Νόμος_45.pdf"
    assert save_upload(tmp_path, "lezione è.txt", TEXT).name == "lezione_è.txt"
    assert save_upload(tmp_path, "noext", PDF).name == "noext.pdf"
    assert save_upload(tmp_path, "", TEXT).name == "upload.txt"


def test_save_refuses_a_mismatch_and_writes_nothing(tmp_path):
    with pytest.raises(UploadError, match="not a PDF"):
        save_upload(tmp_path, "fake.pdf", TEXT)
    with pytest.raises(UploadError, match="contains a PDF"):
        save_upload(tmp_path, "real.txt", PDF)
    with pytest.raises(UploadError, match="Only PDF"):
        save_upload(tmp_path, "notes.docx", TEXT)
    with pytest.raises(UploadError):
        save_upload(tmp_path, "random.pdf", os.urandom(2048))
    assert list(tmp_path.iterdir()) == []


def test_save_size_cap(tmp_path):
    assert MAX_UPLOAD_BYTES == 25 * 1024 * 1024
    big = PDF + b"0" * (MAX_UPLOAD_BYTES - len(PDF) + 1)
    with pytest.raises(UploadError, match="25 MB"):
        save_upload(tmp_path, "big.pdf", big)
    assert list(tmp_path.iterdir()) == []
    assert save_upload(tmp_path, "ok.pdf", big[:MAX_UPLOAD_BYTES]).stat().st_size == MAX_UPLOAD_BYTES


def test_save_never_overwrites_a_different_file(tmp_path):
    first = save_upload(tmp_path, "lesson.txt", TEXT)
    again = save_upload(tmp_path, "lesson.txt", TEXT)  # same bytes, same name: nothing new
    other = save_upload(tmp_path, "lesson.txt", TEXT + b"more\n")
    third = save_upload(tmp_path, "lesson.txt", TEXT + b"else\n")
    assert again == first and other.name == "lesson-2.txt" and third.name == "lesson-3.txt"
    assert first.read_bytes() == TEXT and other.read_bytes() == TEXT + b"more\n"


def test_save_is_atomic_and_leaves_no_temporary_file(tmp_path, monkeypatch):
    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(os, "link", boom)
    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        save_upload(tmp_path, "a.txt", TEXT)
    assert list(tmp_path.iterdir()) == []  # neither a half-written a.txt nor a temp file


def test_save_writes_through_a_temp_file_then_moves_it(tmp_path, monkeypatch):
    seen = []
    real_link = os.link

    def spy(src, dst, *a, **k):
        seen.append((Path(src), Path(dst), Path(src).read_bytes()))
        return real_link(src, dst, *a, **k)

    monkeypatch.setattr(os, "link", spy)
    path = save_upload(tmp_path, "a.txt", TEXT)
    (src, dst, data), = seen
    assert src.parent == tmp_path.resolve() and src.name.startswith(".") and dst == path and data == TEXT
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]


def test_save_without_hard_links_falls_back_to_replace(tmp_path, monkeypatch):
    def no_links(*a, **k):
        raise PermissionError("no hard links here")

    monkeypatch.setattr(os, "link", no_links)
    path = save_upload(tmp_path, "a.txt", TEXT)
    assert path.read_bytes() == TEXT and [p.name for p in tmp_path.iterdir()] == ["a.txt"]


def test_save_does_not_follow_a_symlink_out_of_the_corpus(tmp_path):
    corpus, outside = tmp_path / "corpus", tmp_path / "outside"
    corpus.mkdir()
    outside.mkdir()
    (corpus / "trap.pdf").symlink_to(outside / "victim.pdf")
    path = save_upload(corpus, "trap.pdf", PDF)
    assert path.name == "trap-2.pdf" and path.parent == corpus.resolve()
    assert not (outside / "victim.pdf").exists()


# --------------------------------------------------------------------------------------------- ingest

@pytest.fixture
def no_build(monkeypatch):
    calls = []

    def fake(*a, **k):
        calls.append((a, k))
        raise AssertionError("build must not run")

    monkeypatch.setattr(kb.build, "build", fake)
    return calls


def test_ingest_refused_file_writes_nothing_and_does_not_build(tmp_path, no_build):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "keep.txt").write_bytes(TEXT)
    res = ingest_upload(tmp_path / "kb", corpus, "../broken.pdf", os.urandom(5000))
    assert not res.ok and res.status == "failed" and res.message.startswith("broken.pdf:")
    message, reports = res  # unpacks like the (message, reports) pair
    assert message == res.message and reports == []
    assert [p.name for p in corpus.iterdir()] == ["keep.txt"] and not no_build


def test_ingest_unreadable_pdf_is_taken_back_out_before_any_build(tmp_path, no_build):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    res = ingest_upload(tmp_path / "kb", corpus, "damaged.pdf", b"%PDF-1.7\n" + os.urandom(3000))
    assert not res.ok and "could not be read" in res.message and "Nothing was changed" in res.message
    assert list(corpus.iterdir()) == [] and not no_build


def test_ingest_runs_the_build_and_reports_the_file(tmp_path, monkeypatch):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    calls = []

    def fake_build(corpus_dir, kb_dir, embedder=None, progress=None, **k):
        calls.append((Path(corpus_dir), Path(kb_dir)))
        progress("load", 1, 1, "lezione.txt")
        reports = [FileReport("lezione.txt", "ok", pages=1, passages=2, examples=0)]
        return BuildResult(tmp_path / "kb" / "gen-x", reports, passages=2)

    monkeypatch.setattr(kb.build, "build", fake_build)
    seen = []
    text = ("ART. 45 – CARTA GIOCATA\nC. Carta giocata\n4. b) Fino a quando il compagno non ha giocato, un "
            "giocatore può cambiare una designazione involontaria.\n").encode()
    res = ingest_upload(tmp_path / "kb", corpus, "lezione.txt", text, progress=lambda *a: seen.append(a))
    assert res.ok and res.status == "ok" and "2 passages" in res.message and res.generation == "gen-x"
    assert calls == [(corpus, tmp_path / "kb")] and seen == [("load", 1, 1, "lezione.txt")]
    assert (corpus / "lezione.txt").read_bytes() == text


def test_ingest_failed_build_removes_the_new_file(tmp_path, monkeypatch):
    corpus = tmp_path / "corpus"
    corpus.mkdir()

    def broken_build(*a, **k):
        raise RuntimeError("model missing")

    monkeypatch.setattr(kb.build, "build", broken_build)
    res = ingest_upload(tmp_path / "kb", corpus, "l.txt", b"ART. 45\nA. Testo della legge sulle carte.\n")
    assert not res.ok and "still answers as before" in res.message and "model missing" in res.message
    assert list(corpus.iterdir()) == []


def test_ingest_known_bytes_are_not_indexed_twice(tmp_path, monkeypatch, no_build):
    import hashlib
    import json

    kb_dir, corpus = tmp_path / "kb", tmp_path / "corpus"
    (kb_dir / "gen-1").mkdir(parents=True)
    corpus.mkdir()
    (kb_dir / "CURRENT").write_text("gen-1")
    (kb_dir / "gen-1" / "manifest.json").write_text(json.dumps(
        {"documents": {"a.txt": hashlib.sha256(TEXT).hexdigest()}}))
    (corpus / "a.txt").write_bytes(TEXT)
    same = ingest_upload(kb_dir, corpus, "a.txt", TEXT)
    assert same.ok and same.status == "unchanged"
    twin = ingest_upload(kb_dir, corpus, "copy of a.txt", TEXT)
    assert twin.ok and twin.status == "duplicate" and "a.txt" in twin.message
    assert [p.name for p in corpus.iterdir()] == ["a.txt"]


def test_build_lock_is_shared():
    assert library.BUILD_LOCK.acquire(blocking=False)
    library.BUILD_LOCK.release()
