"""The app in a real browser: search, law page, examples page, at desktop and phone widths.

Starts `streamlit run app.py` on a free local port against the session's knowledge base and
drives it with Playwright (Debian's /usr/bin/chromium). Screenshots go to a temporary folder
whose path is printed (run with -s to see it).
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
QUERY = "declarer called the jack from dummy, then said oops, the king"
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run"]

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium (apt-get install chromium; "
                                                     "`make test` installs it)"),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_until_up(url: str, proc: subprocess.Popen, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with code {proc.returncode}")
        try:
            with urllib.request.urlopen(url + "_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"streamlit did not answer within {timeout:.0f} s")


@pytest.fixture(scope="module")
def app_url(built_kb, corpus_copy, tmp_path_factory):
    # a private copy of the knowledge base and corpus: the upload check adds a document to them
    private = tmp_path_factory.mktemp("e2e")
    kb_dir, corpus = private / "kb", private / "corpus"
    shutil.copytree(built_kb, kb_dir)
    shutil.copytree(corpus_copy, corpus)
    port = _free_port()
    env = dict(os.environ, KB_DIR=str(kb_dir), CORPUS_DIR=str(corpus), STREAMLIT_BROWSER_GATHER_USAGE_STATS="false")
    log = tempfile.NamedTemporaryFile("w+", prefix="streamlit-", suffix=".log", delete=False)
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
         "--server.address", "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    try:
        _wait_until_up(url, proc)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
        log.close()


@pytest.fixture(scope="module")
def shots():
    d = Path(tempfile.mkdtemp(prefix="app-shots-"))
    print(f"screenshots: {d}")
    return d


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        try:
            yield b
        finally:
            b.close()


def _page(browser, width: int):
    ctx = browser.new_context(viewport={"width": width, "height": 900 if width > 500 else 844},
                              device_scale_factor=1)
    page = ctx.new_page()
    page.set_default_timeout(60_000)
    return ctx, page


def _no_horizontal_overflow(page) -> None:
    over = page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert over <= 1, f"the page scrolls sideways by {over}px"


_DONE = """() => {
  const end = document.querySelector('.page-end');
  const box = end && end.closest('[data-testid="stElementContainer"]');
  return !!box && !document.querySelector('[data-stale="true"]')
    && !document.querySelector('[data-testid="stStatusWidget"]');
}"""


def _settle(page, timeout_ms: int = 60_000) -> None:
    """Wait until the script run is over: the app's end-of-page marker is there and nothing is stale."""
    page.wait_for_function(_DONE, timeout=timeout_ms)
    page.wait_for_timeout(200)


def _shot(page, path: Path) -> None:
    """A full-page screenshot: Streamlit scrolls inside its own container, so grow the viewport."""
    size = page.viewport_size
    page.evaluate("() => document.querySelectorAll('*').forEach(e => { if (e.scrollTop) e.scrollTop = 0; })")
    height = page.evaluate("() => Math.max(...[...document.querySelectorAll('*')].map(e => e.scrollHeight))")
    page.set_viewport_size({"width": size["width"], "height": min(max(height, size["height"]), 7000)})
    page.wait_for_timeout(400)
    page.screenshot(path=str(path))
    page.set_viewport_size(size)


def _no_traceback(page) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0


def test_search_law_and_examples_pages(app_url, browser, shots):
    from playwright.sync_api import expect

    for width, tag in ((1280, "desktop"), (390, "phone")):
        ctx, page = _page(browser, width)
        try:
            # search: type a situation, press Enter, cards with law chips and sources appear
            page.goto(app_url)
            box = page.get_by_role("textbox", name="Describe the situation, or type a law number")
            box.wait_for()
            box.fill(QUERY)
            box.press("Enter")
            cards = page.locator(".hit-card")
            expect(cards.first).to_be_visible(timeout=90_000)
            expect(page.locator("a.law-chip", has_text=re.compile(r"45C4")).first).to_be_visible()
            expect(cards.first.locator(".hit-source")).to_contain_text("p.")
            _settle(page)
            assert "q=" in page.url
            _no_traceback(page)
            _no_horizontal_overflow(page)
            _shot(page, shots / f"search-{tag}.png")

            # one law in every language: at least two language columns, IT and EN among them
            page.goto(app_url + "?law=45C4b")
            heads = page.locator(".lang-col-head")
            expect(heads.first).to_be_visible(timeout=60_000)
            _settle(page)
            assert heads.count() >= 2
            langs = {heads.nth(i).get_attribute("data-lang") for i in range(heads.count())}
            assert {"it", "en"} <= langs
            expect(page.locator(".law-crumbs")).to_contain_text("45C4")
            _no_traceback(page)
            _no_horizontal_overflow(page)
            _shot(page, shots / f"law-{tag}.png")

            # worked examples with deals drawn (hearts and diamonds red)
            page.goto(app_url + "?examples=46")
            deals = page.locator(".example-card .deal-grid")
            expect(deals.first).to_be_visible(timeout=60_000)
            _settle(page)
            colour = page.locator(".example-card .deal-grid .suit", has_text="♥").first.evaluate(
                "e => getComputedStyle(e).color")
            assert colour == "rgb(204, 0, 0)"
            _no_traceback(page)
            _no_horizontal_overflow(page)
            _shot(page, shots / f"examples-{tag}.png")

            # the library: its documents
            page.goto(app_url + "?page=library")
            expect(page.get_by_role("heading", name="Library")).to_be_visible(timeout=60_000)
            expect(page.locator('[data-testid="stDataFrame"]')).to_be_visible()
            _settle(page)
            _no_traceback(page)
            _no_horizontal_overflow(page)
            _shot(page, shots / f"library-{tag}.png")
            if tag == "desktop":  # a damaged upload is refused with a sentence, nothing else happens
                page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(
                    files=[{"name": "scan.pdf", "mimeType": "application/pdf", "buffer": os.urandom(4096)}])
                expect(page.get_by_text("scan.pdf", exact=True).first).to_be_visible()
                page.get_by_role("button", name="Add to the knowledge base").click()
                expect(page.locator('[data-testid="stAlertContentError"]')).to_contain_text(
                    "is named .pdf but is not a PDF", timeout=60_000)
                _settle(page)
                _no_traceback(page)
                _shot(page, shots / "library-upload-error-desktop.png")
                # a good text file is indexed incrementally and appears in the table
                text = ("ART. 16 – INFORMAZIONI AUTORIZZATE E NON AUTORIZZATE\n\nD. Informazioni da altre fonti\n"
                        "1. Quando un giocatore riceve accidentalmente informazioni non autorizzate, deve "
                        "avvisare immediatamente l'arbitro.\n")
                page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(
                    files=[{"name": "lezione art 16.txt", "mimeType": "text/plain", "buffer": text.encode()}])
                page.get_by_role("button", name="Add to the knowledge base").click()
                expect(page.locator('[data-testid="stAlertContentSuccess"]')).to_contain_text(
                    "lezione_art_16.txt", timeout=90_000)
                _settle(page)
                expect(page.get_by_text("6 documents", exact=False)).to_be_visible()
                _no_traceback(page)
                _shot(page, shots / "library-upload-ok-desktop.png")
        finally:
            ctx.close()
