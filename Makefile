# Two entry points for a fresh machine: `make run` (the app) and `make test` (the suite).
# Both create .venv and install everything the project needs; nothing is assumed to be installed.
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip

.PHONY: run test install browser ingest lint bench eval

run: install
	$(PY) -m streamlit run app.py --server.address 127.0.0.1 --server.headless true

test: install browser
	$(PY) -m ruff check .
	$(PY) -m pytest

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml constraints.txt
	test -x $(PY) || python3 -m venv $(VENV)
	# torch first, pinned to the local CPU build, so nothing below pulls a CUDA build.
	$(PIP) install --quiet -c constraints.txt torch==2.13.0
	# the rest at the versions the README's numbers were measured with (constraints.txt)
	$(PIP) install --quiet -c constraints.txt -e '.[dev]'
	touch $@

# Debian's chromium for the real-browser tests (root on CI; skipped if already there).
browser:
	@command -v chromium >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; }

ingest: install
	$(PY) -m ingest

lint: install
	$(PY) -m ruff check .

bench: install
	$(PY) bench/run.py

eval: install
	$(PY) -m kb eval ../shared/eval/dev.jsonl
