"""Phase 1: walk a source, read and chunk changed files, commit text + FTS.

A source is searchable lexically as soon as this returns.  Work is committed in
small batches, so a killed run loses at most the batch in flight and the next run
picks up where it stopped (unchanged files are recognised by size, mtime and hash).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import field, replace
from pathlib import PurePosixPath

from kenning.core.confine import SourceRoot
from kenning.core.errors import SourceError
from kenning.core.fsnames import file_of
from kenning.core.logger import get_logger
from kenning.core.progress import CancelToken, Progress, ProgressCallback
from kenning.core.records import Record
from kenning.core.types import ChunkDraft, Document, IndexReport, SkippedFile, Source
from kenning.ingest import chunking
from kenning.ingest.chunking import chunk_document
from kenning.ingest.embedtext import embedding_input, input_sha
from kenning.ingest.extract import is_extracted
from kenning.ingest.extracted import (
    PARTIAL,
    capped_chunks,
    index_extracted,
    known_key,
    parts_index,
    remembered_failures,
)
from kenning.ingest.filetypes import is_test_path
from kenning.ingest.frontmatter import FrontMatter, parse_front_matter
from kenning.ingest.limits import DEFAULT_SIZE_CAP
from kenning.ingest.obsidian import inline_tags, note_links, wiki_link_paths
from kenning.ingest.presence import UNKNOWN, empty_root_keeps, keeps_documents, kept_folders, presence, under
from kenning.ingest.reading import ReadResult, read_text, skip_for
from kenning.ingest.refs import mentioned_paths
from kenning.ingest.walker import FoundFile, walk_source
from kenning.storage.api import KnownDocument, Store

log = get_logger(__name__)

BATCH_SECONDS = 0.5
# More chunks than this from one file (a 2 MB file of one-line sections made 97,280)
# are left out; the file is reported as partially indexed.


class TextOptions(Record, frozen=True):
    size_cap: int = DEFAULT_SIZE_CAP
    # For git sources: rel_path -> (first commit, last commit); files times elsewhere.
    commit_times: dict[str, tuple[float, float]] | None = None
    contextual_input: bool = True  # the model reads a chunk's heading path with it (embedtext.py)
    # rel_path -> the skipped entry of a costly extraction failure, with its content's hash
    # (extracted.remembered_failures): the same bytes are not extracted again.
    failures: Mapping[str, SkippedFile] = field(default_factory=dict)


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
    before = store.documents.skipped(source.id)
    partial = {s.rel_path: s for _, s in before if s.reason == PARTIAL}
    options = replace(options, failures=remembered_failures(s for _, s in before))
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
        _remove_gone(store, source, known, parts, seen, skipped, report, lambda n: _removing(on_progress, source, n))
        store.documents.replace_skipped(source.id, skipped)
    report.skipped = skipped
    report.seconds_text = time.monotonic() - started
    return report


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
        _, st = found.root.resolve(found.parts)  # looked at, not opened: unchanged files cost no read
    except OSError as exc:
        reason, detail = skip_for(exc)
        skipped.append(
            SkippedFile(found.rel_path, reason, "removed before it could be read" if reason == "vanished" else detail)
        )
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
    result = read_text(found.root, found.parts, options.size_cap)
    if result.skip_reason:
        skipped.append(SkippedFile(found.rel_path, result.skip_reason, result.detail))
        return
    st = result.file_stat or st  # what was read, not what was looked at before
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
    chunks = capped_chunks(chunks, found.rel_path, skipped)
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
        c.ord: input_sha(
            embedding_input(c.title, c.text, found.kind, found.rel_path, options.contextual_input, record.title_words)
        )
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


def _removing(on_progress: ProgressCallback, source: Source, count: int) -> None:
    on_progress(Progress(phase="removing", done=0, total=count, source=source.name))


def _remove_gone(
    store: Store,
    source: Source,
    known: dict[str, KnownDocument],
    parts: dict[str, list[str]],
    seen: set[str],
    skipped: list[SkippedFile],
    report: IndexReport,
    announce: Callable[[int], None],
) -> None:
    """Documents whose file is really gone, or that the rules now leave out, disappear
    with their chunks, vectors and refs (ingest.presence: the one rule).

    A file that is now skipped (grown too large, turned binary) goes too: its old text
    no longer describes it.  A file that cannot be read, and everything under a folder
    that cannot be read, stays and is listed.
    """
    if not seen and known:  # every file "gone" at once: not believed of a root now empty
        root = _open_root(source)
        kept_all = empty_root_keeps(root, known)  # looks only, never raises
        if root is not None:
            root.close()
        if kept_all:
            report.errors.append(kept_all)
            return
    kept = kept_folders(skipped)
    # A file the walk found there but could not read (a named pipe or a device where a
    # note was) is listed already; like the watcher (changes.index_paths), keep its text.
    unreadable = {s.rel_path for s in skipped if keeps_documents(s.reason)}
    unseen = [rel for rel in known if rel not in seen and file_of(rel) not in unreadable and not under(rel, kept)]
    gone = []
    if unseen:
        root = _open_root(source)
        try:
            for rel in unseen:
                found = presence(root, rel)
                if found.state == UNKNOWN:
                    skipped.append(found.skipped(rel))
                else:  # gone, or there and left out by the rules
                    gone.append(known[rel].id)
        finally:
            if root is not None:
                root.close()
    now_skipped = [s.rel_path for s in skipped if s.rel_path in seen and not keeps_documents(s.reason)]
    gone += [known[rel].id for rel in now_skipped if rel in known]
    gone += [known[part].id for rel in now_skipped for part in parts.get(rel, ())]
    if gone:
        announce(len(gone))  # a large cascade (chunks, FTS rows, vectors) takes a moment
        store.documents.delete(gone)
    report.removed = len(gone)


def _open_root(source: Source) -> SourceRoot | None:
    try:
        return SourceRoot(source.root)
    except SourceError:
        return None
