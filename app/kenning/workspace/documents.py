"""Opening one indexed document for a front end, refusing everything else.

A front end (the MCP server's `read` and `related`) names a document as a user or an
assistant would: the `abs_path` of a hit, or a path relative to a source (with the
source's name when several sources hold that path).  Only files Kenning has indexed
are ever opened: the path is checked lexically (no `..` out of a source), then opened
as the indexer opens it, from the source's root component by component
(core.confine): a root that now leads elsewhere, a link leading out or into `.git/` is
refused however the file system changed since indexing.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from kenning.core.confine import OUTSIDE_ROOT, SourceRoot, split_rel
from kenning.core.errors import KenningError, SourceError
from kenning.core.fsnames import file_of, filesystem_name, storable_name
from kenning.core.records import Record
from kenning.core.types import Source
from kenning.ingest.extract import is_extracted
from kenning.ingest.filetypes import classify, code_lang
from kenning.ingest.reading import read_text, skip_for
from kenning.storage.api import IndexedDocument, Store


def code_language(rel_path: str) -> str | None:
    """The language Kenning indexes a file as ("python", "rust"…), None for prose: the
    front ends' reading of ingest.filetypes (the preview colours code by it)."""
    kind = classify(rel_path)
    return code_lang(kind) if kind else None


class RefusedPath(KenningError):
    """A path the server will not open: outside the sources, or not indexed."""


class ResolvedDocument(Record, frozen=True):
    source: Source
    document: IndexedDocument
    real_path: Path  # its file (a part's container), every link resolved inside the source's root


def resolve_document(store: Store, path: str, source_name: str | None = None) -> ResolvedDocument:
    if not path or "\x00" in path:
        raise RefusedPath("Give the path of an indexed file (a hit's abs_path, or its path and source).")
    sources = [store.sources.get(source_name)] if source_name else store.sources.list()
    sources = [s for s in sources if s.enabled]
    found = None
    # The path as asked, then as answers show it (a hit's path and abs_path, where a byte
    # that is not UTF-8 reads as the text `\xNN`: core.fsnames).
    for asked in dict.fromkeys((path, filesystem_name(path))):
        if os.path.isabs(os.path.expanduser(asked)):
            found = _absolute(store, sources, os.path.normpath(os.path.expanduser(asked)))
        else:
            found = _relative(store, sources, asked)
        if found is not None:
            break
    if found is None:
        raise RefusedPath(
            f"Refused: {path} is not a file Kenning has indexed. Only indexed documents inside the "
            "sources can be read (the `sources` tool lists them; search hits give each file's abs_path)."
        )
    source, document = found
    with _source_root(source, path) as root:
        parts = split_rel(file_of(document.rel_path))
        try:
            resolved, _ = root.resolve(parts)
        except OSError as exc:
            reason, detail = skip_for(exc)
            if reason == OUTSIDE_ROOT:
                raise RefusedPath(f"Refused: {path} resolves outside the folder of source {source.name!r}.") from None
            if reason != "vanished":
                raise RefusedPath(f"Refused: {path} cannot be read ({reason}: {detail}).") from None
            resolved = tuple(parts)  # gone: the indexed text is served, with a note
        return ResolvedDocument(source, document, Path(root.abs_path(resolved)))


def _source_root(source: Source, asked: str) -> SourceRoot:
    try:
        return SourceRoot(source.root)
    except SourceError as exc:
        raise RefusedPath(f"Refused: {asked} cannot be read now: {exc}") from None


def _absolute(store: Store, sources: list[Source], path: str) -> tuple[Source, IndexedDocument] | None:
    for source in sources:
        for root in {os.path.normpath(source.root), os.path.realpath(source.root)}:
            rel = _below(path, root)
            if rel is not None:
                document = store.documents.find(source.id, storable_name(rel))
                if document is not None:
                    return source, document
    return None


def _below(path: str, root: str) -> str | None:
    """path relative to root (POSIX), or None when path is not lexically below root."""
    try:
        rel = os.path.relpath(path, root)
    except ValueError:  # another drive on Windows
        return None
    if rel == "." or rel == ".." or rel.startswith(".." + os.sep):
        return None
    return PurePosixPath(*Path(rel).parts).as_posix()


def _relative(store: Store, sources: list[Source], path: str) -> tuple[Source, IndexedDocument] | None:
    parts = PurePosixPath(path.replace("\\", "/")).parts
    if not parts or ".." in parts:
        return None
    rel = storable_name(PurePosixPath(*[p for p in parts if p != "."]).as_posix())
    by_id = {s.id: s for s in sources}
    matches = [(by_id[d.source_id], d) for d in store.documents.at(rel) if d.source_id in by_id]
    if len(matches) > 1:
        names = ", ".join(s.name for s, _ in matches)
        raise RefusedPath(f"{path} exists in several sources ({names}): name the source, or pass the abs_path.")
    return matches[0] if matches else None


def document_lines(store: Store, found: ResolvedDocument, size_cap: int) -> tuple[list[str], str | None]:
    """The document's lines (ends kept) and a note when they come from the index, not the file.

    The file is read as the indexer reads it; when that fails now (it changed into a
    binary, grew past the cap, vanished) the indexed text is what the user searched.
    A document extracted from a PDF, an Office file or a mailbox's message has no text
    lines of its own: its extracted text is served, once its file is seen to be there.
    """
    parts = split_rel(file_of(found.document.rel_path))
    with _source_root(found.source, found.document.rel_path) as root:
        if is_extracted(found.document.kind):
            try:
                os.close(root.open_file(parts))
            except OSError as exc:
                reason = skip_for(exc)[0]
            else:
                return _indexed_lines(store, found), "the text Kenning extracted from this file when it indexed it"
        else:
            read = read_text(root, parts, size_cap)
            if read.ok and read.text is not None:
                return read.text.splitlines(keepends=True), None
            reason = read.skip_reason or "unreadable"
    return _indexed_lines(store, found), f"the file could not be read now ({reason}); this is the text as indexed"


def _indexed_lines(store: Store, found: ResolvedDocument) -> list[str]:
    chunks = store.documents.chunks(found.document.id)
    return "\n".join(c.text for c in chunks).splitlines(keepends=True)
