"""How long until semantic search is complete: one wording for the CLI and the app.

The estimate is the pending chunks divided by the model's speed as last measured on
this machine (storage/queue.py keeps it; the indexer updates it as it embeds).
"""

from __future__ import annotations


def seconds_until_semantic(pending: int, chunks_per_second: float | None) -> float | None:
    """None when it cannot be estimated (nothing measured yet); 0 when nothing is pending."""
    if pending <= 0:
        return 0.0
    if not chunks_per_second or chunks_per_second <= 0:
        return None
    return pending / chunks_per_second


def describe_duration(seconds: float) -> str:
    """'about 2 h 17 min', 'about 4 min', 'under a minute'."""
    if seconds < 60:
        return "under a minute"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"about {minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"about {hours} h {minutes} min" if minutes else f"about {hours} h"


def semantic_status(pending: int, chunks_per_second: float | None) -> str:
    """One line: whether semantic search covers everything, and when it will."""
    if pending <= 0:
        return "semantic search: complete (every chunk has a vector)"
    eta = seconds_until_semantic(pending, chunks_per_second)
    if eta is None:
        return f"semantic search: {pending:,} chunks to embed (speed not measured yet; `kenning index` embeds them)"
    return (
        f"semantic search: {pending:,} chunks to embed, complete in {describe_duration(eta)} of embedding"
        f" at {chunks_per_second:,.1f} chunks/s"
    )


def embedding_eta_suffix(done: int, total: int | None, chunks_per_second: float) -> str:
    """For a live progress line while embedding: ' · semantic search complete in about 12 min'."""
    if not total or chunks_per_second <= 0 or done >= total:
        return ""
    return f" · semantic search complete in {describe_duration((total - done) / chunks_per_second)}"
