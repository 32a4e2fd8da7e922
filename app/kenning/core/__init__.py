"""Plain types shared by every layer. Standard library only."""

from kenning.core.errors import (
    Cancelled,
    KenningError,
    SourceError,
    StoreError,
    StoreLockedError,
)
from kenning.core.progress import CancelToken, Progress, ProgressCallback
from kenning.core.types import (
    Breakdown,
    ChunkDraft,
    Document,
    Hit,
    IndexReport,
    ListScore,
    SearchResult,
    SkippedFile,
    Source,
)

__all__ = [
    "Breakdown",
    "Cancelled",
    "CancelToken",
    "ChunkDraft",
    "Document",
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
