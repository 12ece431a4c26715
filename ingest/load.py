"""Stage 1 — load: bytes on disk → RawDocument (lines tagged with their page).

Every failure here is a `LoadError` with a sentence a director can read; the pipeline turns it
into a per-file status and goes on with the next file.
"""

from __future__ import annotations

import codecs
import hashlib
import io
import logging
import re
from pathlib import Path

from .model import Line, RawDocument

TEXT_SUFFIXES = {".txt", ".md", ".text"}
PDF_SUFFIXES = {".pdf"}
SUPPORTED = TEXT_SUFFIXES | PDF_SUFFIXES
MAX_BYTES = 200 * 1024 * 1024  # a single document larger than this is refused, not half-read

_PAGE_MARK = re.compile(r"^\s*(\d{1,4})\s*$")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f\u200b\ufeff]")


class LoadError(Exception):
    """A file that cannot be read; the message says why in plain words."""

    def __init__(self, message: str, status: str = "failed") -> None:
        super().__init__(message)
        self.status = status  # "failed" (broken input) or "skipped" (not something we read)


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def sniff_kind(head: bytes, suffix: str) -> str:
    """'pdf' or 'text' by content (magic bytes), not just by name; raise LoadError otherwise."""
    if head.startswith(b"%PDF-") or b"%PDF-" in head[:1024]:
        return "pdf"
    if suffix in PDF_SUFFIXES:
        raise LoadError("not a PDF: the file has a .pdf name but no PDF header")
    if suffix not in TEXT_SUFFIXES:
        raise LoadError(f"unsupported file type '{suffix or '(none)'}' (PDF, .txt and .md are read)", "skipped")
    return "text"


def load(path: Path, root: Path | None = None) -> RawDocument:
    """Read one file. Raises LoadError with a clear message for anything unreadable."""
    path = Path(path)
    rel = str(path.relative_to(root)) if root else path.name
    try:
        size = path.stat().st_size
    except OSError as e:
        raise LoadError(f"cannot read file: {e.strerror or e}") from e
    if size == 0:
        raise LoadError("empty file (0 bytes)", "skipped")
    if size > MAX_BYTES:
        raise LoadError(f"file too large ({size // (1 << 20)} MB; limit {MAX_BYTES // (1 << 20)} MB)", "skipped")
    with open(path, "rb") as f:
        head = f.read(4096)
    kind = sniff_kind(head, path.suffix.lower())
    digest = sha256_file(path)
    if kind == "pdf":
        lines, pages, notes = _load_pdf(path)
        encoding = None
    else:
        lines, pages, encoding, notes = _load_text(path)
    if not any(ln.text.strip() for ln in lines):
        raise LoadError("no text found in the file")
    return RawDocument(path=rel, name=path.name, sha256=digest, lines=lines, pages=pages, encoding=encoding,
                       notes=notes)


# ---------------------------------------------------------------- text files

def decode_text(data: bytes) -> tuple[str, str, list[str]]:
    """Decode bytes to text. Detects BOMs and falls back from UTF-8 to cp1252/latin-1 *saying so*."""
    notes: list[str] = []
    for bom, enc in ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
                     (codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"),
                     (codecs.BOM_UTF16_BE, "utf-16")):
        if data.startswith(bom):
            try:
                return data.decode(enc), enc, notes
            except UnicodeDecodeError as e:
                raise LoadError(f"declares {enc} with a byte-order mark but does not decode: {e.reason}") from e
    if _looks_binary(data):
        raise LoadError("binary content, not text (wrong file extension?)")
    try:
        return data.decode("utf-8"), "utf-8", notes
    except UnicodeDecodeError:
        pass
    try:
        text = data.decode("cp1252")
        notes.append("not valid UTF-8: decoded as cp1252 (Windows Western European)")
        return text, "cp1252", notes
    except UnicodeDecodeError:
        notes.append("not valid UTF-8 nor cp1252: decoded as latin-1")
        return data.decode("latin-1"), "latin-1", notes


def _looks_binary(data: bytes) -> bool:
    sample = data[:8192]
    if b"\x00" in sample:
        return True
    bad = sum(1 for b in sample if b < 32 and b not in (9, 10, 12, 13))
    return bad > max(8, len(sample) // 50)


def _load_text(path: Path) -> tuple[list[Line], int, str, list[str]]:
    data = path.read_bytes()
    text, encoding, notes = decode_text(data)
    del data
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    page = 1
    lines: list[Line] = []
    blank_run = 0
    for raw in text.split("\n"):
        # A form feed is a page break (text exported from a paginated source).
        parts = raw.split("\f")
        for i, part in enumerate(parts):
            if i:
                page += 1
            part = _CONTROL.sub("", part)
            # A bare number after a long blank gap is a page number of a converted PDF: page break.
            m = _PAGE_MARK.match(part)
            if m and blank_run >= 3 and int(m.group(1)) == page + 1:
                page += 1
                blank_run = 0
                continue
            blank_run = blank_run + 1 if not part.strip() else 0
            lines.append(Line(part, page))
    return lines, page, encoding, notes


# ---------------------------------------------------------------- PDF files

def _load_pdf(path: Path) -> tuple[list[Line], int, list[str]]:
    # pypdf logs warnings for every odd object; they are not the user's business here.
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    from pypdf import PdfReader
    from pypdf.errors import DependencyError, PdfReadError

    notes: list[str] = []
    try:
        reader = PdfReader(io.BytesIO(path.read_bytes()), strict=False)
        if reader.is_encrypted:
            try:
                ok = reader.decrypt("")
            except Exception as e:  # missing crypto backend, unsupported algorithm
                raise LoadError(f"encrypted PDF that cannot be opened ({e})", "skipped") from e
            if not ok:
                raise LoadError("encrypted: the PDF needs a password", "skipped")
            notes.append("encrypted with an empty password: opened")
        pages = reader.pages
        n = len(pages)
    except LoadError:
        raise
    except DependencyError as e:
        raise _aes_error(e) from e
    except (PdfReadError, ValueError, KeyError, TypeError, OSError, AttributeError, IndexError) as e:
        raise LoadError(f"corrupt or truncated PDF: {e}") from e
    except Exception as e:  # pypdf raises a zoo of errors on hostile input
        raise LoadError(f"corrupt PDF: {type(e).__name__}: {e}") from e
    if n == 0:
        raise LoadError("PDF has no pages")
    lines: list[Line] = []
    empty, garbled, failed = [], [], []
    for i in range(n):
        try:
            text = pages[i].extract_text() or ""
        except DependencyError as e:
            raise _aes_error(e) from e
        except Exception:
            failed.append(i + 1)
            continue
        text = _CONTROL.sub("", text.replace("\r\n", "\n").replace("\r", "\n").replace("\f", "\n"))
        if not text.strip():
            empty.append(i + 1)
            continue
        if is_garbled(text):
            garbled.append(i + 1)
            continue
        lines.extend(Line(t, i + 1) for t in text.split("\n"))
    if not lines:
        if failed and not empty:
            raise LoadError("corrupt PDF: no page could be read")
        raise LoadError("no text layer; OCR is not supported")
    for label, bad in (("without text", empty), ("garbled", garbled), ("unreadable", failed)):
        if bad:
            notes.append(f"{len(bad)} page(s) {label} skipped: {_pages(bad)}")
    return lines, n, notes


def _aes_error(e: Exception) -> LoadError:
    """An AES-encrypted PDF (most "secured" PDFs: empty user password, owner password only) needs
    the optional `cryptography` package in pypdf. Without it, pypdf raises DependencyError from the
    reader or from each page, which used to read "corrupt PDF: DependencyError ..." or "corrupt PDF:
    no page could be read": wrong, since the file is fine and installing one package fixes it."""
    return LoadError(f"encrypted PDF (AES): reading it needs the 'cryptography' package "
                     f"(pip install cryptography): {e}")


def is_garbled(text: str) -> bool:
    """Text from a broken font map: mostly replacement/private-use/control glyphs, few letters."""
    chars = [c for c in text if not c.isspace()]
    if not chars:
        return False
    bad = sum(1 for c in chars if c == "\ufffd" or "\ue000" <= c <= "\uf8ff" or ord(c) < 32)
    letters = sum(1 for c in chars if c.isalpha())
    return bad / len(chars) > 0.3 or letters / len(chars) < 0.2


def _pages(nums: list[int]) -> str:
    return ", ".join(map(str, nums[:10])) + (" …" if len(nums) > 10 else "")
