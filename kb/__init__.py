"""The knowledge base at query time: store, search, law lookup, CLI.

    from kb import KnowledgeBase
    kb = KnowledgeBase.open()            # KB_DIR or ./.kb
    kb.search("declarer called the jack from dummy, then said oops, the king")
    kb.law("45C4b"); kb.examples("46")

Heavy modules (numpy, faiss, torch) load on first use, so `from kb import lawref` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__all__ = ["KnowledgeBase", "KBError"]

if TYPE_CHECKING:
    from .knowledge import KnowledgeBase
    from .store import KBError


def __getattr__(name: str):
    if name == "KnowledgeBase":
        from .knowledge import KnowledgeBase

        return KnowledgeBase
    if name == "KBError":
        from .store import KBError

        return KBError
    raise AttributeError(name)
