"""The ingest pipeline: a document goes in, tagged passages come out.

load → clean → segment → (deal, question/answer) → lang → tag, in `pipeline.py`;
embed → infer tags → index is done by `kb.build`, which `python -m ingest` calls.
"""
