"""Adding documents to the corpus from the app: safe names, content sniffing, atomic writes, ingest.

Everything here is careful with what a browser sends: the file name is only a hint (its folder
parts, hidden dots and control characters are dropped), the bytes decide the type, a file is
written next to its final place and moved in atomically, nothing is ever written outside the
corpus folder, and nothing already there is overwritten. `ingest_upload` then rebuilds the
knowledge base incrementally; a file that cannot be read is taken back out, so what was indexed
before stays exactly as it was.
"""

from __future__ import annotations

import codecs
import contextlib
import hashlib
import json
import os
import re
import tempfile
import threading
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["MAX_UPLOAD_BYTES", "ALLOWED_SUFFIXES", "UploadError", "UploadResult", "safe_filename", "sniff",
           "save_upload", "ingest_upload", "BUILD_LOCK"]

MAX_UPLOAD_BYTES = 25 * 1024 * 1024
ALLOWED_SUFFIXES = (".pdf", ".txt", ".md")
MAX_NAME_CHARS = 120
MAX_NAME_BYTES = 240  # file systems allow 255 bytes; Greek letters take two each in UTF-8
_WINDOWS_RESERVED = {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(1, 10)),
                     *(f"LPT{i}" for i in range(1, 10))}

#: one build at a time in this process (two sessions uploading at once, or a first start)
BUILD_LOCK = threading.Lock()

Progress = Callable[[str, int, int, str], None]


class UploadError(Exception):
    """An upload refused before anything was written; the message is a sentence for the user."""


# ----------------------------------------------------------------------------------------- names

def _split_ext(name: str) -> tuple[str, str]:
    """('stem', '.ext') where the extension is short and alphanumeric, else (name, '')."""
    i = name.rfind(".")
    if i <= 0:
        return name, ""
    ext = name[i:]
    if 1 < len(ext) <= 10 and ext[1:].isalnum() and ext[1:].isascii():
        return name[:i], ext.lower()
    return name, ""


def _clean_part(s: str) -> str:
    out = []
    for ch in s:
        cat = unicodedata.category(ch)
        if cat[0] in "LN" or cat[0] == "M" or ch in "-_.":
            out.append(ch)
        elif ch.isspace():
            out.append("_")
        elif cat[0] == "C":  # control, format, surrogate, private use: dropped
            continue
        else:
            out.append("_")
    s = "".join(out)
    s = re.sub(r"_{2,}", "_", s)
    s = re.sub(r"\.{2,}", ".", s)
    return s


def safe_filename(name: str) -> str:
    """A file name that is safe to create inside the corpus folder, keeping what a person would read.

    Only the last path component counts (``../x.pdf`` → ``x.pdf``, ``C:\\x\\y.pdf`` → ``y.pdf``);
    letters of any script (accents, Greek), digits, ``-``, ``_`` and ``.`` are kept, spaces become
    ``_``, anything else is replaced or dropped; never hidden, never empty, at most 120 characters
    with the extension kept.
    """
    name = unicodedata.normalize("NFC", str(name or ""))
    name = "".join(ch for ch in name if unicodedata.category(ch) not in ("Cc", "Cf", "Cs"))
    parts = [p for p in re.split(r"[/\\]+", name) if p.strip() not in ("", ".", "..")]
    base = parts[-1] if parts else ""
    base = re.sub(r"^[A-Za-z]:", "", base)  # a drive letter glued to a bare name: "C:y.pdf"
    base = base.strip().strip(".").strip()
    stem, ext = _split_ext(base)
    stem = _clean_part(stem).strip("._-")[:MAX_NAME_CHARS - len(ext)]
    while len((stem + ext).encode("utf-8")) > MAX_NAME_BYTES:
        stem = stem[:-1]
    stem = stem.rstrip("._-") or "upload"
    if stem.upper() in _WINDOWS_RESERVED:  # harmless here, a trap on a Windows copy of the corpus
        stem = stem[:-1] + "_" if len(stem + ext) >= MAX_NAME_CHARS else stem + "_"
    return stem + ext


# ----------------------------------------------------------------------------------------- content

_TEXT_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
              (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


def _control_share(text: str) -> float:
    sample = text[:20000]
    if not sample:
        return 0.0
    bad = sum(1 for ch in sample if (ord(ch) < 32 and ch not in "\t\n\r\f\v") or ch == "\x7f")
    return bad / len(sample)


def sniff(data: bytes) -> str:
    """'pdf' or 'text', decided by the bytes; UploadError with a sentence for anything else."""
    if not data:
        raise UploadError("The file is empty (0 bytes).")
    if data[:1024].find(b"%PDF-") != -1:
        return "pdf"
    for bom, enc in _TEXT_BOMS:
        if data.startswith(bom):
            try:
                text = data.decode(enc)
            except UnicodeDecodeError as e:
                raise UploadError(f"The file starts like {enc.upper()} text but does not decode ({e.reason}).") \
                    from None
            if "\x00" in text or _control_share(text) > 0.01:
                raise UploadError("The file is not readable text: it contains binary data.")
            return "text"
    if b"\x00" in data:
        raise UploadError("The file is neither a PDF (no PDF header) nor text (it contains binary data).")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        try:
            text = data.decode("cp1252")
        except UnicodeDecodeError:
            raise UploadError("The file is neither a PDF (no PDF header) nor text in UTF-8, UTF-16 or "
                              "Windows-1252.") from None
    if _control_share(text) > 0.01:
        raise UploadError("The file is neither a PDF (no PDF header) nor text (it contains binary data).")
    return "text"


def _check_type(name: str, data: bytes) -> str:
    """The final name: the extension must agree with the content (added when there is none)."""
    stem, ext = _split_ext(name)
    if ext and ext not in ALLOWED_SUFFIXES:
        raise UploadError(f"Only PDF, .txt and .md files can be added, not {ext}.")
    try:
        kind = sniff(data)
    except UploadError:
        if ext == ".pdf" and data:
            raise UploadError("It is named .pdf but is not a PDF (no PDF header): it may be damaged or of "
                              "another type.") from None
        raise
    if not ext:
        return f"{stem}{'.pdf' if kind == 'pdf' else '.txt'}"
    if ext == ".pdf" and kind != "pdf":
        raise UploadError("It is named .pdf but is not a PDF (no PDF header): it may be damaged or of "
                          "another type.")
    if ext in (".txt", ".md") and kind == "pdf":
        raise UploadError(f"It is named {ext} but contains a PDF: rename it to .pdf and add it again.")
    return name


def _same_bytes(path: Path, data: bytes) -> bool:
    try:
        if not path.is_file() or path.is_symlink() or path.stat().st_size != len(data):
            return False
        return hashlib.sha256(path.read_bytes()).digest() == hashlib.sha256(data).digest()
    except OSError:
        return False


def _candidates(name: str):
    stem, ext = _split_ext(name)
    yield name
    for i in range(2, 10_000):
        suffix = f"-{i}"
        yield f"{stem[:MAX_NAME_CHARS - len(ext) - len(suffix)]}{suffix}{ext}"
    raise UploadError("Too many files with this name in the library; rename the file.")


def save_upload(corpus_dir: Path, name: str, data: bytes) -> Path:
    """Write an uploaded file into `corpus_dir` safely and return where it went.

    Refuses (UploadError, nothing written) a file over MAX_UPLOAD_BYTES, an empty one, one that is
    neither PDF nor text, or one whose extension disagrees with its content. Never writes outside
    the folder, never replaces an existing different file (``name-2.pdf`` instead); the same bytes
    under the same name are not written twice (the existing path is returned).
    """
    data = bytes(data)
    if len(data) > MAX_UPLOAD_BYTES:
        raise UploadError(f"The file is {len(data) / (1 << 20):.1f} MB; files up to "
                          f"{MAX_UPLOAD_BYTES // (1 << 20)} MB can be added.")
    fname = _check_type(safe_filename(name), data)
    corpus = Path(corpus_dir)
    corpus.mkdir(parents=True, exist_ok=True)
    corpus = corpus.resolve()
    fd, tmp_name = tempfile.mkstemp(prefix=".upload-", suffix=".part", dir=corpus)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        for cand in _candidates(fname):
            target = corpus / cand
            if target.resolve().parent != corpus or target.parent != corpus:
                continue  # a symlink or anything that would lead outside the corpus: another name
            if os.path.lexists(target):
                if _same_bytes(target, data):
                    return target
                continue
            try:
                os.link(tmp, target)  # atomic and never replaces an existing file
            except FileExistsError:
                continue  # created meanwhile: next name
            except OSError:
                if os.path.lexists(target):
                    continue
                os.replace(tmp, target)  # file systems without hard links: still atomic
            return target
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    raise UploadError("The file could not be saved.")  # pragma: no cover - _candidates raises first


# ----------------------------------------------------------------------------------------- ingest

@dataclass
class UploadResult:
    """What happened to one uploaded file.

    status: 'ok' (indexed), 'unchanged' (already indexed with these bytes), 'duplicate' (same
    bytes as another document: indexed once), 'failed' (refused or unreadable: nothing changed).
    """

    ok: bool
    status: str
    message: str
    reports: list = field(default_factory=list)  # ingest.model.FileReport from the build, if one ran
    path: Path | None = None
    generation: str | None = None

    def __iter__(self):  # `message, reports = ingest_upload(...)`
        return iter((self.message, self.reports))


def _manifest(kb_dir: Path) -> dict:
    from .store import current_generation

    gen = current_generation(Path(kb_dir))
    if gen is None:
        return {}
    try:
        return json.loads((gen / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def ingest_upload(kb_dir: Path, corpus_dir: Path, name: str, data: bytes,
                  progress: Progress | None = None, embedder=None) -> UploadResult:
    """Save an uploaded file into the corpus and bring the knowledge base up to date.

    Nothing already indexed is ever lost: a refused file is not written; a file that is written
    but cannot be read is removed again before any build; the build itself writes a new
    generation and swaps it in atomically (kb.build).
    """
    from ingest.pipeline import process_file

    from .build import build

    kb_dir, corpus = Path(kb_dir), Path(corpus_dir)
    shown = safe_filename(name)
    try:
        existed = {p.name for p in corpus.iterdir()} if corpus.is_dir() else set()
        path = save_upload(corpus, name, data)
    except UploadError as e:
        return UploadResult(False, "failed", f"{shown}: {e}")
    except OSError as e:
        return UploadResult(False, "failed", f"{shown}: the file could not be saved ({e.strerror or e}).")
    created = path.name not in existed

    def discard() -> None:
        if created:
            with contextlib.suppress(OSError):
                path.unlink()

    digest = hashlib.sha256(data).hexdigest()
    docs = _manifest(kb_dir).get("documents", {})
    if docs.get(path.name) == digest:
        return UploadResult(True, "unchanged", f"{path.name} is already in the knowledge base (same content).",
                            path=path)
    twin = next((n for n, h in docs.items() if h == digest), None)
    if twin is not None:
        discard()
        return UploadResult(True, "duplicate", f"{shown} has the same content as {twin}, which is already in "
                                               "the knowledge base: nothing to add.", path=None)

    # read it once before touching the knowledge base: a file that can't be read never enters
    try:
        passages, report, _raw = process_file(path, corpus.resolve() if path.is_absolute() else corpus)
    except Exception as e:  # noqa: BLE001 - a bad document must never take the app down
        discard()
        return UploadResult(False, "failed", f"{path.name} could not be read ({e}); nothing was changed.")
    if report.status != "ok":
        discard()
        return UploadResult(False, "failed", f"{path.name} could not be read: {report.message}. "
                                             "Nothing was changed.", reports=[report])
    if not passages:
        discard()
        return UploadResult(False, "failed", f"{path.name} has no text the knowledge base can use "
                                             "(no passages found). Nothing was changed.", reports=[report])

    try:
        with BUILD_LOCK:
            result = build(corpus, kb_dir, embedder=embedder, progress=progress)
    except Exception as e:  # noqa: BLE001
        discard()
        return UploadResult(False, "failed", f"the knowledge base could not be updated ({e}); "
                                             "it still answers as before.")
    rel = str(path.relative_to(corpus.resolve())) if path.is_absolute() else path.name
    mine = next((r for r in result.reports if r.path in (rel, path.name)), None)
    gen = result.generation.name if result.generation else None
    if mine is None:  # pragma: no cover - the build always reports every corpus file
        return UploadResult(False, "failed", f"{path.name} was saved but not seen by the build.", result.reports,
                            path, gen)
    if mine.status in ("ok", "unchanged"):
        return UploadResult(True, mine.status, f"{path.name}: {mine.pages} page(s), {mine.passages} passages "
                                               f"indexed ({mine.examples} worked examples).", result.reports,
                            path, gen)
    if mine.status == "duplicate":
        discard()
        return UploadResult(True, "duplicate", f"{path.name}: {mine.message}", result.reports, None, gen)
    discard()
    return UploadResult(False, mine.status, f"{path.name} could not be indexed: {mine.message}", result.reports,
                        None, gen)
