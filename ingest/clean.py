"""Stage 2 — clean: remove extraction noise without touching meaning.

Running headers/footers, bare page numbers, control characters, justified-text space runs,
words hyphenated at line ends, LaTeX-ish suit macros. Deal diagrams keep their line structure
(their spacing *is* the layout). Paragraph re-flow happens later, per passage (`reflow`),
because segmentation needs the original line starts.
"""

from __future__ import annotations

import re
from collections import Counter

from .model import Line, RawDocument

SUIT_CHARS = "♠♥♦♣♤♡♢♧"
_SUIT_MACROS = {
    "spadesuit": "♠", "heartsuit": "♥", "diamondsuit": "♦", "clubsuit": "♣",
    "varheartsuit": "♥", "vardiamondsuit": "♦",
}
_LATEX_SUIT = re.compile(r"\$\s*\\(spadesuit|heartsuit|diamondsuit|clubsuit|varheartsuit|vardiamondsuit)\s*([^$]{0,6}?)\s*\$")
_BARE_NUM = re.compile(r"^\s*(?:[-–—]\s*)?(?:page|pagina|pag\.|σελ(?:ίδα)?\.?|seite|página)?\s*(\d{1,4})(?:\s*/\s*\d{1,4})?\s*(?:[-–—])?\s*$",
                       re.IGNORECASE)
# Anchored at the end but searched from every start: on a 100k-letter line that is quadratic
# (minutes per line), so it is only ever applied to a line's last few characters (`_hyphen_end`).
_HYPHEN_END = re.compile(r"[^\W\d_]{2}[-\u00ad]$")
_STARTS_LOWER = re.compile(r"^[^\W\d_]")
_RANK_ROW = re.compile(r"^\s*(?:(?:10|[AKQJTDRx2-9]|-{1,3}|—)\s+){1,3}(?:10|[AKQJTDRx2-9]|-{1,3}|—)\s*$")
_SPACES = re.compile(r"[ \u00a0\u2000-\u200a\u202f]{2,}")
_NBSP = re.compile(r"[\u00a0\u2000-\u200a\u202f]")


def is_diagram_line(text: str) -> bool:
    """Lines whose spacing carries a layout: hands, suit columns, auction grids."""
    return any(c in text for c in SUIT_CHARS) or "\t" in text or bool(_RANK_ROW.match(text))


def clean(doc: RawDocument) -> tuple[list[Line], dict[str, int]]:
    """Cleaned lines plus counts of what was removed or repaired (shown in the ingest summary)."""
    stats: Counter[str] = Counter()
    lines = [Line(_fix_chars(ln.text, stats), ln.page) for ln in doc.lines]
    if doc.pages >= 2:
        lines = _drop_running_lines(lines, doc.pages, stats)
        lines = _drop_page_numbers(lines, stats)
    out: list[Line] = []
    for ln in lines:
        text = ln.text.rstrip()
        if not is_diagram_line(text):
            squeezed = _SPACES.sub(" ", text).strip()
            if squeezed != text.strip():
                stats["space runs"] += 1
            text = _NBSP.sub(" ", squeezed)
        out.append(Line(text, ln.page))
    out = _join_hyphenated(out, stats)
    return out, dict(stats)


def _fix_chars(text: str, stats: Counter[str]) -> str:
    if "$" in text and "\\" in text:
        new = _LATEX_SUIT.sub(lambda m: _SUIT_MACROS[m.group(1)] + m.group(2).strip(), text)
        if new != text:
            stats["suit macros"] += 1
            text = new
    return text.replace("\u00ad", "-") if text.endswith("\u00ad") else text


def _shape(text: str) -> str:
    return re.sub(r"\d+", "#", " ".join(text.split())).casefold()


def _edge_indices(page_lines: list[int], lines: list[Line], n: int = 2) -> list[int]:
    nonblank = [i for i in page_lines if lines[i].text.strip()]
    return nonblank[:n] + nonblank[-n:]


def _pages(lines: list[Line]) -> dict[int, list[int]]:
    pages: dict[int, list[int]] = {}
    for i, ln in enumerate(lines):
        pages.setdefault(ln.page, []).append(i)
    return pages


def _drop_running_lines(lines: list[Line], n_pages: int, stats: Counter[str]) -> list[Line]:
    """A line that stands at the top or bottom of most pages (digits aside) is a running header/footer."""
    pages = _pages(lines)
    if len(pages) < 2:
        return lines
    seen: Counter[str] = Counter()
    for idx in pages.values():
        seen.update({_shape(lines[i].text) for i in _edge_indices(idx, lines)})
    need = max(2, (len(pages) + 1) // 2)
    running = {s for s, c in seen.items() if c >= need and len(s) > 3 and not _BARE_NUM.match(s)}
    drop = set()
    for idx in pages.values():
        for i in _edge_indices(idx, lines):
            if _shape(lines[i].text) in running:
                drop.add(i)
    stats["running headers/footers"] += len(drop)
    return [ln for i, ln in enumerate(lines) if i not in drop]


def _drop_page_numbers(lines: list[Line], stats: Counter[str]) -> list[Line]:
    """Bare numbers at a page's edge whose value follows the page index (same offset on most pages)."""
    pages = _pages(lines)
    candidates: dict[int, int] = {}  # line index -> offset (value - page)
    for page, idx in pages.items():
        nonblank = [i for i in idx if lines[i].text.strip()]
        for i in nonblank[:1] + nonblank[-1:]:
            m = _BARE_NUM.match(lines[i].text)
            if m:
                candidates[i] = int(m.group(1)) - page
    if not candidates:
        return lines
    offset, count = Counter(candidates.values()).most_common(1)[0]
    if count < max(2, len(pages) // 2):
        return lines
    drop = {i for i, off in candidates.items() if off == offset}
    stats["page numbers"] += len(drop)
    return [ln for i, ln in enumerate(lines) if i not in drop]


def _hyphen_end(text: str) -> bool:
    """A word broken at the line end ("partner-"): two letters then a hyphen, looked for in the last
    three characters only, so the test costs the same on a 100,000-character line as on a short one."""
    return bool(_HYPHEN_END.search(text[-3:]))


def _join_hyphenated(lines: list[Line], stats: Counter[str]) -> list[Line]:
    out: list[Line] = []
    i = 0
    while i < len(lines):
        ln = lines[i]
        text = ln.text
        if _hyphen_end(text) and i + 1 < len(lines) and _STARTS_LOWER.match(lines[i + 1].text.lstrip()):
            nxt = lines[i + 1].text.lstrip()
            first, _, rest = nxt.partition(" ")
            if first[:1].islower():
                out.append(Line(text[:-1] + first, ln.page))
                stats["hyphenated words"] += 1
                if rest.strip():
                    lines[i + 1] = Line(rest, lines[i + 1].page)
                    i += 1
                else:
                    i += 2
                continue
        out.append(ln)
        i += 1
    return out


# ---------------------------------------------------------------- re-flow, used when a passage is built

_SENT_END = re.compile(r"[.:;?!»”\"')\]*]$")
_LIST_START = re.compile(r"^(?:[-–•*]\s|\(?[a-zA-Zα-ωΑ-Ω]\)\s?|\d{1,2}[.)]\s?\S|\(\d{1,2}\)\s)")


def reflow(lines: list[str]) -> str:
    """Join lines broken by wrapping into paragraphs; keep diagram lines, list items and blank-line breaks."""
    widths = sorted(len(t) for t in lines if t.strip() and not is_diagram_line(t))
    full = widths[int(len(widths) * 0.9)] if widths else 80
    paras: list[str] = []
    cur = ""
    prev = ""  # the previous physical line of `cur`
    for text in lines:
        t = text.rstrip()
        if not t.strip() or is_diagram_line(t) or t.lstrip().startswith("|"):  # tables keep their rows
            if cur:
                paras.append(cur)
                cur = ""
            if t.strip():
                paras.append(t)
            continue
        t = t.strip()
        wrapped = not _SENT_END.search(prev) and (len(prev) >= 0.6 * full or t[:1].islower())
        if cur and not _LIST_START.match(t) and wrapped:
            cur += " " + t
        else:
            if cur:
                paras.append(cur)
            cur = t
        prev = t
    if cur:
        paras.append(cur)
    return "\n".join(paras)
