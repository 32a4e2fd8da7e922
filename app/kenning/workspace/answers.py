"""The JSON records front ends print: one definition for `--json` and the MCP answers.

Every record a script or an assistant reads carries `"version": SCHEMA_VERSION`; the
fields are listed in the README ("JSON output") and a test checks the table against
what is printed.  A field is only ever added within a version; renaming or removing one
raises the version.
"""

from __future__ import annotations

from typing import Any

from kenning.workspace.links import Link, Mention, NoteLinks, NoteRef

SCHEMA_VERSION = 1


def note_record(ref: NoteRef) -> dict[str, Any]:
    return {"source": ref.source, "path": ref.path, "abs_path": ref.abs_path, "title": ref.title}


def link_record(link: Link, *, origin: bool = True) -> dict[str, Any]:
    """One link: where it is (origin: the linking note's fields), what it says, what it names."""
    out: dict[str, Any] = note_record(link.origin) if origin else {}
    out.update({"line": link.line, "target": link.target, "embed": link.embed, "status": link.status})
    if link.to is not None:
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
        "backlinks": [link_record(link) for link in found.backlinks],
        "mentions": [mention_record(m) for m in found.mentions],
    }


def unresolved_record(links: list[Link]) -> dict[str, Any]:
    return {"version": SCHEMA_VERSION, "unresolved": [link_record(link) for link in links]}
