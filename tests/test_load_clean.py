"""Stage tests: load (encodings, PDFs, bad files) and clean (headers, page numbers, hyphens, reflow)."""

from __future__ import annotations

import pytest

from ingest.clean import clean, reflow
from ingest.load import LoadError, decode_text, load

GREEK = "Ο αμυνόμενος έδειξε φύλλο ♠ ♥ ♦ ♣"


def test_utf8_text(tmp_path):
    f = tmp_path / "a.txt"
    f.write_text("Il morto ha giocato una carta non nominata.\nPenalità.", encoding="utf-8")
    doc = load(f)
    assert doc.encoding == "utf-8" and not doc.notes
    assert doc.lines[0].text.startswith("Il morto") and doc.lines[0].page == 1


def test_cp1252_fallback_is_said(tmp_path):
    f = tmp_path / "it.txt"
    f.write_bytes("La carta penalizzata è già sul tavolo: “regola”.".encode("cp1252"))
    doc = load(f)
    assert doc.encoding == "cp1252"
    assert "è già" in doc.lines[0].text and "“regola”" in doc.lines[0].text
    assert any("cp1252" in n for n in doc.notes)


def test_latin1_fallback(tmp_path):
    text, enc, notes = decode_text("perché\x81".encode("latin-1"))
    assert enc == "latin-1" and text.startswith("perché") and notes


def test_utf16_bom(tmp_path):
    f = tmp_path / "u16.txt"
    f.write_bytes("\ufeffΝόμος 45Γ4β".encode("utf-16-le") if False else "Νόμος 45Γ4β".encode("utf-16"))
    doc = load(f)
    assert doc.encoding == "utf-16" and doc.lines[0].text == "Νόμος 45Γ4β"


@pytest.mark.parametrize("content,msg", [(b"", "empty"), (b"\x00\x01\x02binary\x00" * 50, "binary")])
def test_bad_text_files(tmp_path, content, msg):
    f = tmp_path / "bad.txt"
    f.write_bytes(content)
    with pytest.raises(LoadError, match=msg):
        load(f)


def test_unsupported_type_is_skipped(tmp_path):
    f = tmp_path / "x.docx"
    f.write_bytes(b"PK\x03\x04 something")
    with pytest.raises(LoadError) as e:
        load(f)
    assert e.value.status == "skipped"


def test_pdf_header_by_content_not_name(tmp_path):
    f = tmp_path / "fake.pdf"
    f.write_text("just text", encoding="utf-8")
    with pytest.raises(LoadError, match="not a PDF"):
        load(f)


def test_form_feed_and_page_marks(tmp_path):
    f = tmp_path / "p.txt"
    f.write_text("page one\fpage two\n\n\n\n3\nstill three", encoding="utf-8")
    doc = load(f)
    pages = {ln.text: ln.page for ln in doc.lines if ln.text.strip()}
    assert pages == {"page one": 1, "page two": 2, "still three": 3}


def test_pdf_greek_suits_header_and_page_numbers(pdf_factory):
    header = "Σχόλια στους Νόμους 45–47 · Commentary"
    pages = [
        ["Ο εκτελεστής ζητάει ένα φύλλο από το μορ, αλλά ένα λάθος φύλλο παίζεται και η", "λεβέ ολοκληρώνεται."],
        [GREEK, "Declarer calls for the ♠6 but dummy plays the ♥6."],
        ["A defender's card held so that it is possible for his part-", "ner to see its face must be played."],
    ]
    pdf = pdf_factory("c.pdf", pages, header=header)
    raw = load(pdf)
    assert raw.pages == 3
    assert [ln.page for ln in raw.lines if "♠6" in ln.text] == [2]
    lines, stats = clean(raw)
    texts = [ln.text for ln in lines if ln.text.strip()]
    assert not any("Commentary" in t for t in texts), "running header removed"
    assert not any(t.strip().isdigit() for t in texts), "page numbers removed"
    assert stats["running headers/footers"] == 3 and stats["page numbers"] == 3
    assert any(t.endswith("his partner") for t in texts) and not any("part-" in t for t in texts), "hyphen joined"
    assert any(GREEK in t for t in texts)


def test_encrypted_pdf_with_password_is_skipped(tmp_path, pdf_factory):
    from pypdf import PdfReader, PdfWriter

    src = pdf_factory("plain.pdf", [["Law 45 text"], ["more"]])
    w = PdfWriter(clone_from=PdfReader(src))
    w.encrypt("secret")
    enc = tmp_path / "enc.pdf"
    with open(enc, "wb") as f:
        w.write(f)
    with pytest.raises(LoadError, match="encrypted") as e:
        load(enc)
    assert e.value.status == "skipped"


def test_encrypted_pdf_with_empty_password_is_read(tmp_path, pdf_factory):
    from pypdf import PdfReader, PdfWriter

    src = pdf_factory("plain.pdf", [["Law 45 text"], ["more"]])
    w = PdfWriter(clone_from=PdfReader(src))
    w.encrypt("")
    enc = tmp_path / "enc.pdf"
    with open(enc, "wb") as f:
        w.write(f)
    doc = load(enc)
    assert any("Law 45" in ln.text for ln in doc.lines)


def test_corrupt_pdf(tmp_path):
    f = tmp_path / "c.pdf"
    f.write_bytes(b"%PDF-1.4\n" + bytes(range(256)) * 40)
    with pytest.raises(LoadError):
        load(f)


def test_space_runs_squeezed_but_diagrams_kept(tmp_path):
    f = tmp_path / "s.txt"
    f.write_text("Declarer  is  allowed   to discover\n\t♠J854\t\n♠K93\t\t♠AQ76\n", encoding="utf-8")
    lines, stats = clean(load(f))
    assert lines[0].text == "Declarer is allowed to discover"
    assert lines[2].text == "♠K93\t\t♠AQ76"
    assert stats["space runs"] == 1


def test_reflow_joins_wrapped_lines_keeps_items_and_titles():
    lines = [
        "A. Prima che qualsiasi giocatore abbia dichiarato",
        "Quando un giocatore è passato fuori turno prima che qualsiasi giocatore abbia dichiarato, il colpevole",
        "deve passare al suo primo turno licitativo.",
        "a) dovere del colpevole",
        "♠ KJ852",
        "♥ QT864",
    ]
    out = reflow(lines).split("\n")
    assert out[0] == "A. Prima che qualsiasi giocatore abbia dichiarato"
    assert out[1].endswith("il colpevole deve passare al suo primo turno licitativo.")
    assert out[2] == "a) dovere del colpevole"
    assert out[3:] == ["♠ KJ852", "♥ QT864"]
