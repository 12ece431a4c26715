"""Shared fixtures: PDFs built in the test with a Unicode font, the default corpus, a small KB."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "corpus"
FONT_DIRS = [Path("/usr/share/fonts/truetype/dejavu"), Path("/usr/share/fonts/dejavu")]


def dejavu() -> Path:
    for d in FONT_DIRS:
        f = d / "DejaVuSans.ttf"
        if f.exists():
            return f
    raise RuntimeError("DejaVuSans.ttf not found: apt-get install fonts-dejavu-core")


def make_pdf(path: Path, pages: list[list[str]], header: str | None = None, numbers: bool = True,
             mono: bool = False) -> Path:
    """A real PDF: each page's lines, an optional running header, and a page number at the foot."""
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(False)
    font = dejavu()
    pdf.add_font("dv", "", str(font.with_name("DejaVuSansMono.ttf") if mono else font))
    for i, lines in enumerate(pages, 1):
        pdf.add_page()
        pdf.set_font("dv", size=10)
        y = 12
        if header:
            pdf.set_xy(15, y)
            pdf.cell(0, 5, header)
            y += 10
        for line in lines:
            pdf.set_xy(15, y)
            pdf.cell(0, 5, line)
            y += 5.5
        if numbers:
            pdf.set_xy(100, 285)
            pdf.cell(10, 5, str(i))
    pdf.output(str(path))
    return path


@pytest.fixture
def pdf_factory(tmp_path):
    def factory(name: str, pages: list[list[str]], **kw) -> Path:
        return make_pdf(tmp_path / name, pages, **kw)

    return factory


@pytest.fixture(scope="session")
def corpus_copy(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("corpus")
    for f in CORPUS.iterdir():
        shutil.copy(f, d / f.name)
    return d


@pytest.fixture(scope="session")
def built_kb(tmp_path_factory) -> Path:
    """The default corpus built once per test session with the real model (shared, read-only)."""
    from kb.build import build

    kb_dir = tmp_path_factory.mktemp("kb")
    build(CORPUS, kb_dir)
    return kb_dir


@pytest.fixture(scope="session")
def kb(built_kb):
    from kb import KnowledgeBase

    return KnowledgeBase.open(built_kb)


@pytest.fixture(autouse=True, scope="session")
def _quiet_env():
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    yield
