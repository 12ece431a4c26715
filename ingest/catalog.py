"""corpus/catalog.toml: what a document is (title, author, year, edition of the Laws) when the file can't say."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

CATALOG_FILE = "catalog.toml"


@dataclass
class CatalogEntry:
    file: str
    title: str = ""
    author: str = ""
    year: int | None = None
    languages: list[str] = field(default_factory=list)
    laws_edition: int | None = None
    kind: str = ""
    source: str = ""


def load_catalog(corpus: Path) -> tuple[dict[str, CatalogEntry], list[str]]:
    """Entries by file name, plus problems found (a broken catalog never stops an ingest)."""
    path = Path(corpus) / CATALOG_FILE
    if not path.exists():
        return {}, []
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        return {}, [f"{CATALOG_FILE}: unreadable ({e}); documents ingest without catalog data"]
    entries: dict[str, CatalogEntry] = {}
    problems: list[str] = []
    known = set(CatalogEntry.__dataclass_fields__)
    for i, raw in enumerate(data.get("document", [])):
        if not isinstance(raw, dict) or "file" not in raw:
            problems.append(f"{CATALOG_FILE}: document #{i + 1} has no 'file'")
            continue
        entries[raw["file"]] = CatalogEntry(**{k: v for k, v in raw.items() if k in known})
    return entries, problems


def default_entry(name: str) -> CatalogEntry:
    """What we can say of an uncatalogued file: its name as a title."""
    stem = Path(name).stem.replace("_", " ").replace("-", " ")
    return CatalogEntry(file=name, title=stem)
