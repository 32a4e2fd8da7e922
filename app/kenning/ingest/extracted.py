"""Writing what an extractor found (PDF pages, notebook cells, mail messages) as documents.

The extracted sections go through the same chunker as files read as text: a section
of markdown is cut by its headings, code by its definitions; each chunk keeps the
section's location ("p. 12", "cell 3").  Line numbers count lines of the extracted
text (sections joined by newlines), which is what the preview shows.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, TypeVar

from kenning.core.fsnames import file_of, part_path
from kenning.core.logger import get_logger
from kenning.core.patterns import lazy_pattern
from kenning.core.types import ChunkDraft, Document, IndexReport, SkippedFile, Source
from kenning.ingest import chunking
from kenning.ingest.chunking import chunk_document
from kenning.ingest.embedtext import embedding_input, input_sha
from kenning.ingest.extract import CONTAINER_KINDS, Extracted, extract_file, size_cap_for
from kenning.ingest.filetypes import is_test_path
from kenning.ingest.reading import read_raw
from kenning.ingest.refs import mentioned_paths
from kenning.storage.api import KnownDocument, Store

log = get_logger(__name__)

PARTIAL = "partial"  # the skip reason of a file indexed only in part (too many chunks, text cut off)
_T = TypeVar("_T")
MAX_CHUNKS_PER_FILE = 2000  # commit at least this often so search sees progress

# Extraction failures that cost the time or memory limit each time they are tried (a
# parser quadratic in a hostile file): remembered with the content's hash, so the file
# is not extracted again, 30 s each run, until it changes.  The hash is kept in the
# skipped entry's detail, so both backends keep it without a new column.
_COSTLY = ("timeout", "too-large")
_REMEMBERED = lazy_pattern(r"\(content ([0-9a-f]{16})\)$")


def remembered_failures(skipped: Iterable[SkippedFile]) -> dict[str, SkippedFile]:
    """The entries of a skipped list that name the content they failed on."""
    return {s.rel_path: s for s in skipped if s.reason in _COSTLY and _REMEMBERED.search(s.detail)}


def _failed_before(failures: Mapping[str, SkippedFile], rel_path: str, sha256: str) -> SkippedFile | None:
    entry = failures.get(rel_path)
    found = _REMEMBERED.search(entry.detail) if entry else None
    return entry if found and found.group(1) == sha256[:16] else None


def capped_chunks(chunks: list[_T], rel_path: str, skipped: list[SkippedFile]) -> list[_T]:
    """At most MAX_CHUNKS_PER_FILE chunks of one document, whatever its format: a file of
    tiny sections (Markdown, an HTML page, a notebook, a PDF repeating a page) must not
    flood the index.  Its start is kept and the file is listed as partially indexed."""
    if len(chunks) <= MAX_CHUNKS_PER_FILE:
        return chunks
    skipped.append(
        SkippedFile(rel_path, PARTIAL, f"only the first {MAX_CHUNKS_PER_FILE} of {len(chunks)} chunks are indexed")
    )
    return chunks[:MAX_CHUNKS_PER_FILE]


if TYPE_CHECKING:  # textphase imports this module
    from kenning.ingest.textphase import TextOptions
    from kenning.ingest.walker import FoundFile


def known_key(rel_path: str, kind: str) -> str:
    """Which stored document tells whether this file changed (a container's first part)."""
    return part_path(rel_path, "1") if kind in CONTAINER_KINDS else rel_path


def parts_index(known: dict[str, KnownDocument]) -> dict[str, list[str]]:
    """Container path -> the stored paths of its parts ("inbox.mbox" -> ["inbox.mbox#1", ...])."""
    out: dict[str, list[str]] = {}
    for rel in known:
        container = file_of(rel)
        if container != rel:
            out.setdefault(container, []).append(rel)
    return out


def index_extracted(
    store: Store,
    source: Source,
    found: FoundFile,
    st: os.stat_result,
    known: KnownDocument | None,
    options: TextOptions,
    report: IndexReport,
    skipped: list[SkippedFile],
    dates: tuple[float | None, float | None],
) -> None:
    """Hash, extract (in the worker) and write one file of an extracted format."""
    cap = size_cap_for(found.kind, options.size_cap)
    raw = read_raw(found.root, found.parts, cap)
    if raw.skip_reason or raw.raw is None:
        skipped.append(SkippedFile(found.rel_path, raw.skip_reason or "unreadable", raw.detail))
        return
    st = raw.file_stat or st
    if known and known.sha256 == raw.raw_sha256 and known.chunking_version == chunking.CHUNKING_VERSION:
        store.documents.touch(known.id, st.st_mtime)
        report.unchanged += 1
        return
    failed = _failed_before(options.failures, found.rel_path, raw.raw_sha256)
    if failed is not None:  # the same bytes failed before: not tried again, still listed
        skipped.append(failed)
        return
    # The worker is handed the bytes just hashed, never the path: nothing can be swapped
    # in between, and what is extracted is what the hash names.
    extraction = extract_file(raw.raw, found.kind, cap, PurePosixPath(found.rel_path).name)
    if extraction.skip_reason:
        detail = extraction.detail
        if extraction.skip_reason in _COSTLY:
            detail += f"; not tried again until the file changes (content {raw.raw_sha256[:16]})"
        skipped.append(SkippedFile(found.rel_path, extraction.skip_reason, detail))
        return
    truncated = next((d.meta["truncated"] for d in extraction.documents if d.meta.get("truncated")), None)
    if truncated:
        skipped.append(SkippedFile(found.rel_path, PARTIAL, str(truncated)))
    try:
        written = _write(store, source, found, st, raw.raw_sha256, extraction.documents, dates, skipped)
    except Exception as exc:  # one odd file must never stop the run
        log.warning("indexing %s:%s failed", source.name, found.rel_path, exc_info=True)  # for a bug report
        report.errors.append(f"{found.rel_path}: {exc}")
        return
    report.record_written(written, was_known=known is not None)


def _write(
    store: Store,
    source: Source,
    found: FoundFile,
    st: os.stat_result,
    sha256: str,
    documents: tuple[Extracted, ...],
    dates: tuple[float | None, float | None],
    skipped: list[SkippedFile],
) -> int:
    written = 0
    file_created, file_updated = dates
    for doc in documents:
        rel_path = part_path(found.rel_path, doc.part)
        chunks = capped_chunks(extracted_chunks(doc, rel_path), rel_path, skipped)
        record = Document(
            source_id=source.id,
            rel_path=rel_path,
            sha256=sha256,
            size=st.st_size,
            mtime=st.st_mtime,
            created_at=doc.date if doc.date is not None else file_created,
            updated_at=doc.date if doc.date is not None else file_updated,
            kind=found.kind,
            title=doc.title or PurePosixPath(found.rel_path).name,
            tags=(),
            ext=PurePosixPath(found.rel_path).suffix.lstrip(".").lower(),
            is_test=is_test_path(found.rel_path),
            meta=json.dumps(doc.meta, ensure_ascii=False, sort_keys=True) if doc.meta else "",
            chunking_version=chunking.CHUNKING_VERSION,
        )
        kinds = {c.ord: k for c, k in chunks}
        drafts = [c for c, _ in chunks]
        refs = {c.ord: mentioned_paths(c.text) for c in drafts}
        shas = {c.ord: input_sha(embedding_input(c.title, c.text, kinds[c.ord], rel_path)) for c in drafts}
        store.documents.replace(record, drafts, refs, shas)
        written += len(drafts)
    if found.kind in CONTAINER_KINDS:
        numbers = [int(d.part) for d in documents if d.part.isdigit()]
        store.documents.delete_parts_after(source.id, found.rel_path, max(numbers, default=0))
    return written


def extracted_chunks(doc: Extracted, rel_path: str) -> list[tuple[ChunkDraft, str]]:
    """(chunk, kind of the section it came from), numbered through the whole document."""
    out: list[tuple[ChunkDraft, str]] = []
    line_offset = 0
    name = PurePosixPath(rel_path).name
    bare_titles = {name, PurePosixPath(rel_path).stem, ""}
    for section in doc.sections:
        for chunk in chunk_document(section.text, section.kind, rel_path, line_offset=line_offset):
            # A page of a PDF has no heading: its outline entry, or the document's title, says
            # more than its file name.
            title = (section.heading or doc.title or chunk.title) if chunk.title in bare_titles else chunk.title
            out.append((dataclasses.replace(chunk, ord=len(out), title=title, location=section.location), section.kind))
        line_offset += section.text.count("\n") + 1
    return out
