"""The JSON records front ends print: one definition for `--json` and the MCP answers.

Every record a script or an assistant reads carries `"version": SCHEMA_VERSION`; the
fields are listed in the README ("JSON output") and a test checks the table against
what is printed.  A field is only ever added within a version; renaming or removing one
raises the version.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from kenning.workspace.links import Link, Mention, NoteLinks, NoteRef

if TYPE_CHECKING:
    from kenning.core.types import SearchResult
    from kenning.workspace.sources import SourceOverview
    from kenning.workspace.workspace import StoreStatus

SCHEMA_VERSION = 1
MAX_SKIPPED_LISTED = 50


def iso(when: float | None) -> str | None:
    """A time as scripts read it: UTC, ISO 8601 (None stays None)."""
    return None if when is None else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when))


def search_record(result: SearchResult, mode: str) -> dict[str, Any]:
    """What a search meant, beside its hits: the mode that answered, the notes (why it
    differs from the request: a model loading, `source:nosuch`), corrections, did-you-mean."""
    return {
        "query": result.query,
        "mode": mode,
        "layer": result.layer,
        "notes": list(result.notes),
        # What was searched when it was not what was typed: a quoted phrase nothing
        # contains ("No note contains …; showing results for its words"), corrected words.
        "notice": result.banner(),
        "corrections": dict(result.corrections),
        "did_you_mean": result.suggestion,
    }


def source_records(overview: SourceOverview) -> list[dict[str, Any]]:
    out = []
    for s in overview.sources:
        st = overview.stats.get(s.id)
        out.append(
            {
                "name": s.name,
                "kind": s.kind,
                "root": s.root,
                "enabled": s.enabled,
                "last_indexed": iso(s.last_indexed_at),
                "documents": st.documents if st else 0,
                "chunks": st.chunks if st else 0,
                "vectors_pending": st.pending_vectors if st else 0,
                "skipped_files": st.skipped if st else 0,
            }
        )
    return out


def status_record(status: StoreStatus, log: str | None = None) -> dict[str, Any]:
    """`kenning status --json`, and the body of the MCP `status` answer."""
    return {
        "version": SCHEMA_VERSION,
        "store": str(status.path),
        "size_bytes": status.size_bytes,
        "model": status.model,
        "log": log,
        "documents": status.overview.documents,
        "chunks": status.overview.chunks,
        "vectors_pending": status.pending_vectors,
        "semantic": status.semantic_text,
        "semantic_eta_seconds": status.semantic_eta_seconds,
        "sources": source_records(status.overview),
        "skipped_files": len(status.skipped),
        "skipped": [
            {"source": name, "path": s.rel_path, "reason": s.reason, "detail": s.detail}
            for name, s in status.skipped[:MAX_SKIPPED_LISTED]
        ],
    }


def note_record(ref: NoteRef) -> dict[str, Any]:
    return {"source": ref.source, "path": ref.path, "abs_path": ref.abs_path, "title": ref.title}


def link_record(link: Link, *, origin: bool = True, to: bool = True) -> dict[str, Any]:
    """One link: where it is (origin: the linking note's fields), what it says, what it
    names (to: left out of a note's backlinks, which all name the note itself)."""
    out: dict[str, Any] = note_record(link.origin) if origin else {}
    out.update({"line": link.line, "target": link.target, "embed": link.embed, "status": link.status})
    if to and link.to is not None:
        out["to"] = note_record(link.to)
    if link.candidates:
        out["candidates"] = list(link.candidates)
    if link.context:
        out["context"] = link.context
    return out


def mention_record(mention: Mention) -> dict[str, Any]:
    return {**note_record(mention.origin), "line": mention.line, "name": mention.name, "context": mention.context}


def note_links_record(found: NoteLinks) -> dict[str, Any]:
    return {
        "version": SCHEMA_VERSION,
        "note": note_record(found.note),
        "names": list(found.names),
        "outgoing": [link_record(link, origin=False) for link in found.outgoing],
        "backlinks": [link_record(link, to=False) for link in found.backlinks],
        "mentions": [mention_record(m) for m in found.mentions],
    }


def unresolved_record(links: list[Link]) -> dict[str, Any]:
    return {"version": SCHEMA_VERSION, "unresolved": [link_record(link) for link in links]}
