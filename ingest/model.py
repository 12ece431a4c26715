"""Plain dataclasses that flow between the ingest stages.

load → clean → segment → tag → embed → index: each stage takes and returns these, so every
stage can be tested on its own with small hand-made values.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from typing import Literal

Kind = Literal["law_text", "example", "commentary"]
KINDS: tuple[str, ...] = ("law_text", "example", "commentary")
SEATS: tuple[str, ...] = ("north", "east", "south", "west")
SUITS: tuple[str, ...] = ("spades", "hearts", "diamonds", "clubs")


@dataclass
class Line:
    """One line of extracted text and the page it came from (1-based)."""

    text: str
    page: int


@dataclass
class RawDocument:
    """A file read into lines, before any cleaning."""

    path: str  # path relative to the corpus folder
    name: str  # file name, used as the document id
    sha256: str
    lines: list[Line]
    pages: int
    encoding: str | None = None  # for text files: how the bytes were decoded
    notes: list[str] = field(default_factory=list)  # what loading noticed (fallback encoding, bad pages)


@dataclass
class Hand:
    """One hand by suit; ranks as a string high to low, 'T' for ten, '' for a void."""

    spades: str = ""
    hearts: str = ""
    diamonds: str = ""
    clubs: str = ""

    def cards(self) -> int:
        return sum(len(getattr(self, s)) for s in SUITS)


@dataclass
class Deal:
    """A deal diagram: up to four hands (None where the diagram leaves a seat out)."""

    north: Hand | None = None
    east: Hand | None = None
    south: Hand | None = None
    west: Hand | None = None
    dealer: str | None = None  # "N", "E", "S", "W"
    vulnerability: str | None = None  # "None", "NS", "EW", "All"
    contract: str | None = None  # e.g. "3NT", "4S", "6H"

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict | None) -> Deal | None:
        if not d:
            return None
        hands = {s: Hand(**d[s]) if d.get(s) else None for s in SEATS}
        return cls(**hands, dealer=d.get("dealer"), vulnerability=d.get("vulnerability"), contract=d.get("contract"))


@dataclass
class Passage:
    """The unit the knowledge base stores, searches and shows."""

    id: str
    doc: str
    page: int
    page_end: int | None
    lang: str
    kind: str
    title: str
    text: str
    laws: list[str] = field(default_factory=list)  # what the passage is about, canonical, primary first
    cites: list[str] = field(default_factory=list)  # laws only mentioned in passing
    inferred: dict[str, float] = field(default_factory=dict)  # law -> confidence, from its words or similar passages
    heading: str | None = None  # the law/article heading the passage sits under, canonical
    example_no: str | None = None
    question: str | None = None
    answer: str | None = None
    deal: Deal | None = None

    def to_dict(self) -> dict:
        d = asdict(self)
        d["deal"] = self.deal.to_dict() if self.deal else None
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Passage:
        d = dict(d)
        d["deal"] = Deal.from_dict(d.get("deal"))
        return cls(**d)


def passage_id(doc: str, text: str, n: int = 0) -> str:
    """Stable id: same document + same content (+ occurrence) = same id across re-ingests."""
    h = hashlib.sha1(f"{doc}\x00{n}\x00{text}".encode()).hexdigest()
    return h[:16]


@dataclass
class FileReport:
    """What the ingest did with one file: shown in the summary, the app and the exit code."""

    path: str
    status: Literal["ok", "skipped", "failed", "duplicate", "unchanged"]
    message: str = ""
    pages: int = 0
    passages: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)
    by_lang: dict[str, int] = field(default_factory=dict)
    examples: int = 0
    laws: list[str] = field(default_factory=list)
    cleaned: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
