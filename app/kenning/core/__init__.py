"""Plain types shared by every layer. Standard library only."""

from kenning.core.errors import (
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
    EmbedReport,
    Hit,
    IndexReport,
    ListScore,
    SearchResult,
    SkippedFile,
    Source,
)

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
