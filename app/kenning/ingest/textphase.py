"""Phase 1: walk a source, read and chunk changed files, commit text + FTS.

A source is searchable lexically as soon as this returns.  Work is committed in
small batches, so a killed run loses at most the batch in flight and the next run
picks up where it stopped (unchanged files are recognised by size, mtime and hash).
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from kenning.core.progress import CancelToken, Progress, ProgressCallback
from kenning.core.types import ChunkDraft, Document, IndexReport, SkippedFile, Source
from kenning.ingest import chunking
from kenning.ingest.chunking import chunk_document
from kenning.ingest.embedtext import embedding_input, input_sha
from kenning.ingest.extract import is_extracted
from kenning.ingest.extracted import PARTIAL, index_extracted, known_key, parts_index
from kenning.ingest.filetypes import is_test_path
from kenning.ingest.frontmatter import FrontMatter, parse_front_matter
from kenning.ingest.limits import DEFAULT_SIZE_CAP
from kenning.ingest.obsidian import inline_tags, note_links, wiki_link_paths
from kenning.ingest.reading import ReadResult, read_text
from kenning.ingest.refs import mentioned_paths
from kenning.ingest.walker import FoundFile, walk_source
from kenning.storage.api import KnownDocument, Store

log = logging.getLogger(__name__)

BATCH_SECONDS = 0.5
# More chunks than this from one file (a 2 MB file of one-line sections made 97,280)
# are left out; the file is reported as partially indexed.
MAX_CHUNKS_PER_FILE = 2000  # commit at least this often so search sees progress


@dataclass(frozen=True)
class TextOptions:
    size_cap: int = DEFAULT_SIZE_CAP
    # For git sources: rel_path -> (first commit, last commit); files times elsewhere.
    commit_times: dict[str, tuple[float, float]] | None = None
    contextual_input: bool = True  # the model reads a chunk's heading path with it (embedtext.py)


def index_text(
    store: Store,
    source: Source,
    options: TextOptions,
    on_progress: ProgressCallback,
    cancel: CancelToken,
) -> IndexReport:
    report = IndexReport(source=source.name)
    known = store.documents.known(source.id)
    parts = parts_index(known)  # an mbox's messages are documents of their own
    partial = _partial_before(store, source)
    seen: set[str] = set()
    skipped: list[SkippedFile] = []
    started = time.monotonic()
    ticker = _BatchTicker(store)
    try:
        for found in walk_source(source, skipped):
            if cancel.cancelled:
                report.cancelled = True
                break
            seen.add(found.rel_path)
            seen.update(parts.get(found.rel_path, ()))
            report.files_seen += 1
            ticker.maybe_commit()
            key = known_key(found.rel_path, found.kind)
            unchanged = report.unchanged
            _index_one(store, source, found, known.get(key), options, report, skipped)
            if report.unchanged > unchanged and found.rel_path in partial:
                skipped.append(partial[found.rel_path])  # still only partly indexed: it has not changed
            _report_progress(on_progress, source, report, found.rel_path, started)
    finally:
        ticker.close()
    if not report.cancelled:
        _remove_gone(store, known, parts, seen, skipped, report, lambda n: _removing(on_progress, source, n))
        store.documents.replace_skipped(source.id, skipped)
    report.skipped = skipped
    report.seconds_text = time.monotonic() - started
    return report


def _partial_before(store: Store, source: Source) -> dict[str, SkippedFile]:
    """The files the last run indexed only partly: the list is rewritten each run, and an
    unchanged file is not read again to find it out anew."""
    return {s.rel_path: s for _, s in store.documents.skipped(source.id) if s.reason == PARTIAL}


class _BatchTicker:
    """Groups many small per-file writes into one transaction every BATCH_SECONDS."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._tx: contextlib.AbstractContextManager[None] | None = None
        self._opened = 0.0

    def maybe_commit(self) -> None:
        now = time.monotonic()
        if self._tx is not None and now - self._opened < BATCH_SECONDS:
            return
        self.close()
        tx = self._store.atomic()
        tx.__enter__()
        self._tx = tx
        self._opened = now

    def close(self) -> None:
        if self._tx is not None:
            tx, self._tx = self._tx, None
            tx.__exit__(None, None, None)


def _report_progress(
    on_progress: ProgressCallback, source: Source, report: IndexReport, current: str, started: float
) -> None:
    elapsed = max(time.monotonic() - started, 1e-6)
    on_progress(
        Progress(
            phase="text",
            done=report.files_seen,
            total=None,
            current=current,
            errors=len(report.errors),
            source=source.name,
            rate=report.files_seen / elapsed,
        )
    )


def _index_one(
    store: Store,
    source: Source,
    found: FoundFile,
    known: KnownDocument | None,
    options: TextOptions,
    report: IndexReport,
    skipped: list[SkippedFile],
) -> None:
    try:
        st = os.stat(found.abs_path)
    except FileNotFoundError:
        skipped.append(SkippedFile(found.rel_path, "vanished", "removed before it could be read"))
        return
    except OSError as exc:
        skipped.append(SkippedFile(found.rel_path, "unreadable", str(exc)))
        return
    # A document cut by another chunker version is re-chunked even when its file is unchanged.
    current = known if known is not None and known.chunking_version == chunking.CHUNKING_VERSION else None
    if current and current.size == st.st_size and current.mtime == st.st_mtime:
        report.unchanged += 1
        return
    if is_extracted(found.kind):  # PDF, HTML, notebooks, Office, mail: ingest/extract/
        dates = _document_dates(found.rel_path, st, options, None)
        index_extracted(store, source, found, st, known, options, report, skipped, dates)
        return
    result = read_text(Path(found.abs_path), options.size_cap)
    if result.skip_reason:
        skipped.append(SkippedFile(found.rel_path, result.skip_reason, result.detail))
        return
    if current and current.sha256 == result.raw_sha256:
        store.documents.touch(current.id, st.st_mtime)
        report.unchanged += 1
        return
    try:
        written = _write_document(store, source, found, st, result, options, skipped)
    except Exception as exc:  # one odd file must never stop the run
        log.warning(
            "indexing %s:%s failed", source.name, found.rel_path, exc_info=True
        )  # the details, for a bug report
        report.errors.append(f"{found.rel_path}: {exc}")
        return
    report.record_written(written, was_known=known is not None)


def _write_document(
    store: Store,
    source: Source,
    found: FoundFile,
    st: os.stat_result,
    result: ReadResult,
    options: TextOptions,
    skipped: list[SkippedFile],
) -> int:
    assert result.text is not None  # read (no skip reason)
    front = parse_front_matter(result.text) if found.kind == "markdown" else None
    if front is not None and front.problem:
        log.info("%s:%s: %s", source.name, found.rel_path, front.problem)
    body = front.body if front else result.text
    offset = front.body_line_offset if front else 0
    chunks = chunk_document(body, found.kind, found.rel_path, line_offset=offset, title=front.title if front else None)
    if len(chunks) > MAX_CHUNKS_PER_FILE:
        # One file of tiny sections must not flood the index: its start is kept and the
        # file is listed as partially indexed.
        skipped.append(
            SkippedFile(
                found.rel_path, PARTIAL, f"only the first {MAX_CHUNKS_PER_FILE} of {len(chunks)} chunks are indexed"
            )
        )
        chunks = chunks[:MAX_CHUNKS_PER_FILE]
    created, updated = _document_dates(found.rel_path, st, options, front)
    tags = front.tags if front else ()
    if found.kind == "markdown":  # Obsidian's inline #tags filter like front-matter ones
        tags = tuple(dict.fromkeys((*tags, *inline_tags(body))))
    record = Document(
        source_id=source.id,
        rel_path=found.rel_path,
        sha256=result.raw_sha256,
        size=st.st_size,
        mtime=st.st_mtime,
        created_at=created,
        updated_at=updated,
        kind=found.kind,
        title=_title(front, chunks, found.rel_path),
        tags=tags,
        ext=PurePosixPath(found.rel_path).suffix.lstrip(".").lower(),
        is_test="test" in (front.tags if front else ()) or is_test_path(found.rel_path),
        title_words=_front_matter_words(front),
        aliases=front.aliases if front else (),
        chunking_version=chunking.CHUNKING_VERSION,
    )
    refs = {c.ord: _references(c.text, found) for c in chunks}
    links = {c.ord: note_links(c.text, c.line_start) for c in chunks} if found.kind == "markdown" else {}
    shas = {
        c.ord: input_sha(embedding_input(c.title, c.text, found.kind, found.rel_path, options.contextual_input))
        for c in chunks
    }
    store.documents.replace(record, chunks, refs, shas, links)
    return len(chunks)


def _references(text: str, found: FoundFile) -> set[str]:
    """Paths a chunk mentions: written out, or (in Markdown) as Obsidian `[[wiki links]]`."""
    paths = mentioned_paths(text)
    if found.kind == "markdown":
        paths |= wiki_link_paths(text, found.rel_path)
    return paths


def _front_matter_words(front: FrontMatter | None) -> str:
    """The front matter's title, aliases and tags: searchable as words (weighted as a
    title's), not only as filters or link targets."""
    if front is None:
        return ""
    return " ".join(w for w in (front.title or "", *front.aliases, *front.tags) if w)


def _title(front: FrontMatter | None, chunks: list[ChunkDraft], rel_path: str) -> str:
    if front and front.title:
        return str(front.title)
    for chunk in chunks[:1]:
        if chunk.kind == "prose" and chunk.title and ">" not in chunk.title:
            return chunk.title
    return PurePosixPath(rel_path).name


def _document_dates(
    rel_path: str, st: os.stat_result, options: TextOptions, front: FrontMatter | None
) -> tuple[float | None, float | None]:
    """Front matter wins; then git commit times; then the file's own times."""
    created, updated = _file_times(st)
    if options.commit_times is not None and rel_path in options.commit_times:
        created, updated = options.commit_times[rel_path]
    if front is not None:
        created = front.date if front.date is not None else created
        updated = front.updated if front.updated is not None else (front.date if front.date is not None else updated)
    return created, updated


def _file_times(st: os.stat_result) -> tuple[float, float]:
    birth = getattr(st, "st_birthtime", None)
    created = birth if birth else min(st.st_ctime, st.st_mtime)
    return created, st.st_mtime


# Skip reasons that say nothing about whether a file still exists or what it holds.
KEEP_REASONS = frozenset({"unreadable", PARTIAL})


def _removing(on_progress: ProgressCallback, source: Source, count: int) -> None:
    on_progress(Progress(phase="removing", done=0, total=count, source=source.name))


def _remove_gone(
    store: Store,
    known: dict[str, KnownDocument],
    parts: dict[str, list[str]],
    seen: set[str],
    skipped: list[SkippedFile],
    report: IndexReport,
    announce: Callable[[int], None],
) -> None:
    """Files positively seen to be gone disappear with their chunks, vectors and refs.

    A file that is now skipped (grown too large, turned binary) goes too: its old
    text no longer describes it.  An unreadable file stays, and so does everything
    under an unreadable folder: that is often passing (permissions, a lock, a flaky
    mount) and the indexed text is still the best we have.
    """
    unreadable_dirs = tuple(s.rel_path.rstrip("/") + "/" for s in skipped if s.reason == "unreadable")
    gone = [
        doc.id
        for rel, doc in known.items()
        if rel not in seen and not any(rel.startswith(prefix) for prefix in unreadable_dirs)
    ]
    now_skipped = [s.rel_path for s in skipped if s.rel_path in seen and s.reason not in KEEP_REASONS]
    gone += [known[rel].id for rel in now_skipped if rel in known]
    gone += [known[part].id for rel in now_skipped for part in parts.get(rel, ())]
    if gone:
        announce(len(gone))  # a large cascade (chunks, FTS rows, vectors) takes a moment
        store.documents.delete(gone)
    report.removed = len(gone)
