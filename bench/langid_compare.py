"""Compare two offline language detectors on short Italian/English/Greek (and other) texts.

    .venv/bin/python bench/langid_compare.py

Texts: the first 3–12 words of every passage of the default corpus whose document has a single
language (label from the catalog; Greek by script in the bilingual PDF), plus short table-talk
sentences written here. Prints accuracy per detector and length bucket, and load/detect time.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ingest.catalog import load_catalog  # noqa: E402
from ingest.pipeline import process_corpus  # noqa: E402
from kb.store import default_corpus_dir  # noqa: E402

SHORT = [
    ("it", "il morto ha giocato una carta"), ("it", "carta penalizzata maggiore"), ("it", "attacco fuori turno"),
    ("it", "renonce consumata"), ("it", "il dichiarante chiama il fante"), ("it", "passo fuori turno"),
    ("en", "dummy played the wrong card"), ("en", "revoke established"), ("en", "lead out of turn"),
    ("en", "declarer named a card"), ("en", "penalty card"), ("en", "opening lead face down"),
    ("el", "ο μορ έπαιξε λάθος φύλλο"), ("el", "ρενονς"), ("el", "τιμωρημένο φύλλο"), ("el", "αντάμ εκτός σειράς"),
    ("fr", "le mort a joué une carte"), ("de", "der Alleinspieler hat revoziert"),
    ("es", "el muerto jugó una carta"),
]


def samples() -> list[tuple[str, str]]:
    corpus = default_corpus_dir()
    catalog, _ = load_catalog(corpus)
    out = list(SHORT)
    for path, passages, _r, _raw in process_corpus(corpus, catalog):
        entry = catalog.get(path.name)
        langs = entry.languages if entry else []
        for p in passages:
            words = [w for w in p.text.split() if any(c.isalpha() for c in w)]
            for n in (3, 6, 12):
                text = " ".join(words[:n])
                if len(words) < n:
                    continue
                greek = sum("\u0370" <= c <= "\u03ff" for c in text) > len(text) / 3
                label = "el" if greek else (langs[0] if len(langs) == 1 else ("en" if "el" in langs else None))
                if label:
                    out.append((label, text))
    return out


def lingua_detector(low: bool):
    from lingua import Language, LanguageDetectorBuilder

    b = LanguageDetectorBuilder.from_languages(*[getattr(Language, n) for n in (
        "ITALIAN", "ENGLISH", "GREEK", "FRENCH", "GERMAN", "SPANISH", "DUTCH", "PORTUGUESE")])
    d = (b.with_low_accuracy_mode() if low else b).build()

    def detect(t: str) -> str:
        r = d.detect_language_of(t)
        return r.iso_code_639_1.name.lower() if r else "und"

    return detect


def langdetect_detector():
    from langdetect import DetectorFactory, detect

    DetectorFactory.seed = 0

    def run(t: str) -> str:
        try:
            return detect(t)
        except Exception:
            return "und"

    return run


def main() -> int:
    data = samples()
    print(f"{len(data)} texts\n")
    print("| detector | load s | accuracy (all) | ≤3 words | ≤6 words | ≤12 words | ms/text |")
    print("|---|---|---|---|---|---|---|")
    for name, make in (("lingua (low accuracy)", lambda: lingua_detector(True)),
                       ("lingua (high accuracy)", lambda: lingua_detector(False)),
                       ("langdetect", langdetect_detector)):
        t0 = time.perf_counter()
        det = make()
        det("warm up text")
        load = time.perf_counter() - t0
        t1 = time.perf_counter()
        res = [(lab, det(t), len(t.split())) for lab, t in data]
        per = (time.perf_counter() - t1) / len(data) * 1000

        def acc(rows):
            return sum(a == b for a, b, _ in rows) / len(rows) if rows else 0.0

        print(f"| {name} | {load:.2f} | {acc(res):.3f} | {acc([r for r in res if r[2] <= 3]):.3f} | "
              f"{acc([r for r in res if 3 < r[2] <= 6]):.3f} | {acc([r for r in res if r[2] > 6]):.3f} | {per:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
