"""Plain types shared by every layer. Standard library only.

Importing the package is cheap: its names are loaded on first use (PEP 562), so
`from kenning.core.errors import KenningError` does not also build every dataclass
of core.types and core.progress (a lexical search needs few of them).
"""

from __future__ import annotations

import importlib

from kenning import TYPE_CHECKING

_WHERE = {
    "KenningError": "errors",
    "SourceError": "errors",
    "StoreError": "errors",
    "StoreLockedError": "errors",
    "CancelToken": "progress",
    "Progress": "progress",
    "ProgressCallback": "progress",
    "Breakdown": "types",
    "ChunkDraft": "types",
    "Document": "types",
    "EmbedReport": "types",
    "Hit": "types",
    "IndexReport": "types",
    "ListScore": "types",
    "SearchResult": "types",
    "SkippedFile": "types",
    "Source": "types",
}

if TYPE_CHECKING:
    from typing import Any

    from kenning.core.errors import KenningError, SourceError, StoreError, StoreLockedError
    from kenning.core.progress import CancelToken, Progress, ProgressCallback
    from kenning.core.types import (
        Breakdown,
        ChunkDraft,
        Document,
        EmbedReport,
        Hit,
        IndexReport,
        ListScore,
        SearchResult,
        SkippedFile,
        Source,
    )


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "Breakdown",
    "CancelToken",
    "ChunkDraft",
    "Document",
    "EmbedReport",
    "Hit",
    "IndexReport",
    "KenningError",
    "ListScore",
    "Progress",
    "ProgressCallback",
    "SearchResult",
    "SkippedFile",
    "Source",
    "SourceError",
    "StoreError",
    "StoreLockedError",
]
