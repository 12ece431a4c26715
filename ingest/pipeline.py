"""One document in, tagged passages out: load → clean → segment → (deal, question/answer) → lang → tag.

Embedding, inferred tags and the index are the knowledge base's job (`kb.build`), because they
need the model and the previous index; everything here is pure text work and fast.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from kb import lawref

from . import lang as langid
from .catalog import CatalogEntry, default_entry
from .clean import clean, reflow
from .deal import deal_context, find_deals
from .load import SUPPORTED, LoadError, load
from .model import FileReport, Line, Passage, RawDocument, passage_id
from .segment import Block, plain, segment, split_question_answer
from .tag import explicit_tags

_STRIP_MARKUP = re.compile(r"\*\*|</?u>|</?b>|</?i>")
MAX_PASSAGE_CHARS = 20_000  # about 3,000 words; the embedder reads the first 2,000 characters anyway


def display_path(rel: str) -> str:
    """The path as printable text: bytes of a file name that is not UTF-8 shown as U+FFFD."""
    return os.fsencode(rel).decode("utf-8", "replace")


def name_problem(rel: str) -> str | None:
    """Why a file name cannot be a document name, or None.

    A name that is not valid UTF-8 reaches Python with surrogate escapes; it cannot be hashed into
    passage ids, stored in SQLite or printed, and used to crash the whole ingest. It is reported instead.
    """
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return "file name is not valid UTF-8: rename the file to index it"
    return None


def corpus_files(corpus: Path) -> list[Path]:
    """Every regular file under the corpus folder except the catalog and hidden files, sorted."""
    out = []
    for p in sorted(Path(corpus).rglob("*")):
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(corpus).parts) \
                and p.name != "catalog.toml":
            out.append(p)
    return out


def process_file(path: Path, corpus: Path, entry: CatalogEntry | None = None) -> tuple[list[Passage], FileReport,
                                                                                         RawDocument | None]:
    """Never raises for bad input: a file that can't be read comes back with an explanatory report."""
    rel = str(path.relative_to(corpus)) if path.is_relative_to(corpus) else path.name
    if problem := name_problem(rel):
        return [], FileReport(display_path(rel), "failed", problem), None
    if path.suffix.lower() not in SUPPORTED and path.suffix.lower() not in (".pdf",):
        try:
            with open(path, "rb") as f:
                is_pdf = f.read(5) == b"%PDF-"
        except OSError:
            is_pdf = False
        if not is_pdf:
            return [], FileReport(rel, "skipped", f"unsupported file type '{path.suffix or '(none)'}' "
                                                  "(PDF, .txt and .md are read)"), None
    try:
        raw = load(path, corpus)
    except LoadError as e:
        return [], FileReport(rel, e.status, str(e)), None
    except MemoryError:
        return [], FileReport(rel, "failed", "file too large to read into memory"), None
    entry = entry or default_entry(path.name)
    try:
        passages, report = document_passages(raw, entry)
    except RecursionError as e:  # pathological structure; report, never crash the ingest
        return [], FileReport(rel, "failed", f"could not segment the document: {e}"), raw
    return passages, report, raw


def document_passages(raw: RawDocument, entry: CatalogEntry) -> tuple[list[Passage], FileReport]:
    lines, cleaned = clean(raw)
    blocks = bounded_blocks(segment(lines, entry.title or Path(raw.name).stem))
    doc_lang = entry.languages[0] if len(entry.languages) == 1 else "und"
    scope = lawref.scope_of(entry.title) if entry.title else []
    passages: list[Passage] = []
    seen: Counter[str] = Counter()
    for b in blocks:
        p = block_passage(raw.name, b, doc_lang, scope)
        if p is None:
            continue
        n = seen[p.text]
        seen[p.text] += 1
        p.id = passage_id(raw.name, p.text, n)
        passages.append(p)
    report = FileReport(raw.path, "ok", pages=raw.pages, passages=len(passages), cleaned=cleaned,
                        notes=list(raw.notes))
    report.by_kind = dict(Counter(p.kind for p in passages))
    report.by_lang = dict(Counter(p.lang for p in passages))
    report.examples = count_examples(passages)
    laws = {r for p in passages for r in p.laws}
    report.laws = sorted(laws, key=lawref.sort_key)
    if raw.encoding and raw.encoding not in ("utf-8",):
        report.notes.append(f"encoding: {raw.encoding}")
    return passages, report


def bounded_blocks(blocks: list[Block], limit: int = MAX_PASSAGE_CHARS) -> list[Block]:
    """Blocks of at most `limit` characters: a longer one is cut between lines, a longer line at a space.

    Why: segmentation splits at law numbering and paragraph breaks only, so a text without blank
    lines, or one 100,000-character line, became a single passage of any size, and every later stage
    (law tags, lexical terms, snippets at query time) scans a passage whole: memory and time grew
    with the file (a 10 MB paragraph took 570 MB), and such a passage is useless as a hit anyway.
    """
    out: list[Block] = []
    for b in blocks:
        if sum(len(ln.text) + 1 for ln in b.lines) <= limit:
            out.append(b)
            continue
        cur: list[Line] = []
        size = 0
        for ln in b.lines:
            for piece in _cut(ln.text, limit):
                if cur and size + len(piece) + 1 > limit:
                    out.append(replace(b, lines=cur))
                    cur, size = [], 0
                cur.append(Line(piece, ln.page))
                size += len(piece) + 1
        if cur:
            out.append(replace(b, lines=cur))
    return out


def _cut(text: str, limit: int) -> list[str]:
    pieces = []
    while len(text) > limit:
        i = text.rfind(" ", limit // 2, limit)
        i = i if i > 0 else limit
        pieces.append(text[:i])
        text = text[i:].lstrip(" ")
    pieces.append(text)
    return pieces


def count_examples(passages: list[Passage]) -> int:
    """Worked examples, not passages: the steps of one example (4 · 46B1 … 46B5) count once."""
    return len({(p.heading, p.example_no) for p in passages if p.kind == "example"})


def block_passage(doc: str, b: Block, doc_lang: str, scope: list[str] | None = None) -> Passage | None:
    lines = b.text_lines()
    deal = None
    body_lines = lines
    if b.kind == "example":
        try:
            spans = find_deals(lines)
        except Exception:  # the deal parser is best effort; an odd diagram must not lose the passage
            spans = []
        if spans:
            deal = spans[0].deal
            ctx = deal_context(" ".join(plain(x) for x in lines))
            for k, v in ctx.items():
                if getattr(deal, k, None) is None:
                    setattr(deal, k, v)
            keep = set(range(len(lines))) - {i for s in spans for i in range(s.start, s.end)}
            body_lines = [lines[i] for i in sorted(keep)]
    raw_text = reflow(lines)
    text = _STRIP_MARKUP.sub("", raw_text).strip()
    if not text or len(re.findall(r"\w", text)) < 3:
        return None
    question = answer = None
    if b.kind == "example":
        q, a = split_question_answer(body_lines)
        question = _STRIP_MARKUP.sub("", q).strip() if q else None
        answer_raw = a
        answer = _STRIP_MARKUP.sub("", a).strip() if a else None
    else:
        answer_raw = None
    lang_text = reflow([x for x in body_lines])
    lang = langid.detect(_STRIP_MARKUP.sub("", lang_text), default=doc_lang if doc_lang != "und" else "und")
    laws, cites = explicit_tags(b.kind, raw_text, b.address, b.chapter, question, answer_raw, b.quoted, scope)
    pages = [ln.page for ln in b.lines if ln.text.strip()]
    return Passage(id="", doc=doc, page=min(pages), page_end=max(pages) if max(pages) != min(pages) else None,
                   lang=lang, kind=b.kind, title=_STRIP_MARKUP.sub("", b.title).strip(), text=text, laws=laws,
                   cites=cites, heading=b.chapter, example_no=b.example_no, question=question, answer=answer,
                   deal=deal)


def process_corpus(corpus: Path, catalog: dict[str, CatalogEntry],
                   files: Iterable[Path] | None = None) -> Iterable[tuple[Path, list[Passage], FileReport,
                                                                          RawDocument | None]]:
    for path in files if files is not None else corpus_files(corpus):
        passages, report, raw = process_file(path, corpus, catalog.get(path.name))
        yield path, passages, report, raw
