"""What each MCP tool does, as plain methods returning bounded answers (dicts).

Kept apart from the SDK wiring (server.py) so the behaviour is testable in-process and
the protocol layer stays a list of declarations. The store is used by one tool call at
a time (the SDK runs synchronous tools on worker threads); the index is kept fresh by
the IndexKeeper's own thread and connection (freshness.py).

Every answer is compact JSON with `version` (workspace.answers.SCHEMA_VERSION) and
`index` (when the store last changed, whether changes are followed); records are the
ones `kenning … --json` prints, so scripts and assistants read the same fields.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kenning.core.errors import KenningError
from kenning.core.fsnames import filesystem_name, text_only
from kenning.core.types import Hit
from kenning.mcpserver import bounds
from kenning.mcpserver.model import BackgroundModel
from kenning.mcpserver.options import INDEX_LOCK_WAIT_SECONDS, MAX_LIMIT, MODEL_WAIT_SECONDS, check_max_bytes
from kenning.search.fusion import RELATED_TO_DOCUMENT_LIMIT
from kenning.workspace import Searcher, Workspace, answers
from kenning.workspace.freshness import IndexKeeper, store_workspace

if TYPE_CHECKING:
    from kenning.embedding import Embedder

RELATED_LOADING = "semantic model still loading after {seconds:g} s: ask again shortly"
RELATED_UNAVAILABLE = "semantic search unavailable ({}): related notes need the model"
FILTERS = ("source", "path", "tag", "ext", "after", "before")


class BadArgument(KenningError):
    """A tool argument out of its range: said, never silently changed."""


class KenningService:
    """The tools' behaviour over one Workspace (one connection, used by one call at a time).

    record turns a hit into the JSON record of `kenning search --json`; the CLI that
    starts the server hands it over, so both front ends answer alike.
    """

    def __init__(
        self,
        workspace: Workspace,
        record: Callable[[Hit, bool], dict[str, Any]],
        *,
        max_bytes: int = bounds.DEFAULT_MAX_BYTES,
        allow_writes: bool = False,
        background_model: BackgroundModel | None = None,
        watch: bool = True,
        model_wait: float = MODEL_WAIT_SECONDS,
        lock: threading.RLock | None = None,
        searcher: Searcher | None = None,
        keeper: IndexKeeper | None = None,
    ) -> None:
        """lock, searcher, keeper: a host that serves other front ends from the same
        Workspace (the service, serve.warm) shares its lock, its Searcher (its kept
        engines) and its keeper of the index's freshness (then `watch` is the host's)."""
        self.ws = workspace
        self.record = record
        self.max_bytes = check_max_bytes(max_bytes)
        self.allow_writes = allow_writes
        self.model_wait = model_wait
        self._lock = lock or threading.RLock()
        self.model = background_model or BackgroundModel(self._load_model).start()
        self.searcher = searcher or workspace.searcher()  # the model joins it once loaded (_with_model)
        self._owns_keeper = keeper is None
        self.keeper = (
            keeper
            or IndexKeeper(
                store_workspace(workspace.store_path, workspace.model_name), self._model_for_vectors, watch=watch
            ).start()
        )

    def _load_model(self) -> Embedder:
        # Only the model is loaded on the background thread: the store stays on tool calls.
        from kenning.embedding import QUERY_THREADS
        from kenning.workspace import EmbedderFactory

        with self._lock:
            name = self.ws.model_name
        return EmbedderFactory(name, threads=QUERY_THREADS)()

    def _model_for_vectors(self) -> Embedder:
        """The loaded model, for the vectors of changed files (the keeper's thread waits for it)."""
        self.model.wait()
        if self.model.embedder is None:
            raise KenningError(f"the semantic model could not be loaded ({self.model.error})")
        return self.model.embedder

    def _answer(self, payload: dict[str, Any], keys: tuple[str, ...] = ()) -> dict[str, Any]:
        """The payload with the answer's version and the index's freshness, within the byte cap."""
        return bounds.fit_lists(self._framed(payload), keys, self.max_bytes)

    def _framed(self, payload: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            last_indexed = self.ws.last_indexed_at()
        framed = {"version": answers.SCHEMA_VERSION, **payload, "index": self.keeper.state(last_indexed)}
        answer: dict[str, Any] = text_only(framed)  # a path that is not UTF-8 reads as \xNN: JSON is UTF-8
        return answer

    def _wait_for_model(self) -> float:
        """Waits (bounded) for the model a semantic question needs; the seconds waited."""
        if self.model.state != "loading":
            return 0.0
        started = time.monotonic()
        self.model.wait(self.model_wait)
        return time.monotonic() - started

    # -- search -------------------------------------------------------------------

    def search(
        self, query: str, limit: int | None = None, mode: str = "hybrid", explain: bool = False, **filters: str | None
    ) -> dict[str, Any]:
        """limit: None for the user's result-count setting; either way at most MAX_LIMIT."""
        from kenning.search.query import parse_query

        if limit is not None:
            limit = _within("limit", limit, 1, MAX_LIMIT)
        text = _with_filters(query, filters)
        if mode != "lexical" and not parse_query(text).is_empty:
            self._wait_for_model()  # a one-shot client still gets meaning, not keywords alone
        with self._lock:
            result = self._with_model().search(text, mode, limit=limit, max_limit=MAX_LIMIT)
            self.searcher.save_query_vectors()
        payload = answers.search_record(result, result.mode)
        payload["hits"] = [self.record(hit, explain) for hit in result.hits]
        return self._answer(payload, ("hits",))

    def _with_model(self) -> Searcher:
        """The searcher, with the model if it has loaded meanwhile (call under the lock)."""
        self.searcher.set_model(self.model.embedder, self.model.error)
        return self.searcher

    # -- read and related ---------------------------------------------------------

    def read(
        self,
        path: str,
        source: str | None = None,
        start_line: int = 1,
        end_line: int | None = None,
        line_numbers: bool = True,
    ) -> dict[str, Any]:
        if start_line < 1:
            raise BadArgument(f"start_line must be 1 or more (lines are numbered from 1), not {start_line}.")
        if end_line is not None and end_line < start_line:
            raise BadArgument(
                f"end_line {end_line} is before start_line {start_line}: give a range that reads forward."
            )
        with self._lock:
            found = self.ws.resolve_document(path, source)
            lines, note = self.ws.document_lines(found)
        if start_line > max(1, len(lines)):
            raise BadArgument(
                f"start_line {start_line} is past the end: {found.document.rel_path} has {len(lines)} lines."
            )
        payload: dict[str, Any] = {
            "source": found.source.name,
            "path": found.document.rel_path,
            "abs_path": str(found.real_path),
            "total_lines": len(lines),
            "numbered": line_numbers,
        }
        if note:
            payload["note"] = note
        last = len(lines) if end_line is None else min(len(lines), end_line)
        wanted = [_cut_long_line(line, self.max_bytes // 2) for line in lines[start_line - 1 : last]]
        return bounds.fit_lines(self._framed(payload), wanted, start_line, self.max_bytes, numbered=line_numbers)

    def related(self, path: str, source: str | None = None, limit: int = RELATED_TO_DOCUMENT_LIMIT) -> dict[str, Any]:
        limit = _within("limit", limit, 1, MAX_LIMIT)
        waited = self._wait_for_model()
        with self._lock:
            found = self.ws.resolve_document(path, source)
            payload: dict[str, Any] = {
                "source": found.source.name,
                "path": found.document.rel_path,
                "notes": [],
                "related": [],
            }
            embedder = self.model.embedder
            if embedder is None:
                payload["notes"].append(
                    RELATED_LOADING.format(seconds=round(waited, 1))
                    if self.model.state == "loading"
                    else RELATED_UNAVAILABLE.format(self.model.error)
                )
                return self._answer(payload, ("related",))
            # The searcher's semantic engine: its vectors are read once, not per call.
            found_docs = self._with_model().related_to_document(found.document.id, limit)
        if found_docs is None:
            payload["notes"].append("this file has no vectors yet: they are computed shortly after it changes")
        else:
            payload["related"] = [
                {
                    "source": d.source,
                    "path": d.path,
                    "abs_path": d.abs_path,
                    "title": d.title,
                    "line": d.line_start,  # of the file's closest chunk
                    "similarity": round(d.cosine, 4),
                }
                for d in found_docs
            ]
        return self._answer(payload, ("related",))

    # -- links (workspace.links: the same graph as `kenning links`) ----------------

    def backlinks(self, path: str, source: str | None = None, mentions: bool = True) -> dict[str, Any]:
        with self._lock:
            found = self.ws.note_links(path, source, mentions=mentions)
        record = answers.note_links_record(found)
        return self._answer(record, ("outgoing", "backlinks", "mentions"))

    def unresolved_links(self, source: str | None = None) -> dict[str, Any]:
        with self._lock:
            found = self.ws.unresolved_links(source)
        return self._answer(answers.unresolved_record(found), ("unresolved",))

    # -- sources and status -------------------------------------------------------

    def sources(self) -> dict[str, Any]:
        with self._lock:
            payload = {"sources": answers.source_records(self.ws.overview())}
        return self._answer(payload, ("sources",))

    def status(self) -> dict[str, Any]:
        with self._lock:
            status = self.ws.status()
            embedder = self.model.embedder
            embedded = embedder is not None and self.ws.has_vectors(embedder)
            payload = answers.status_record(status, _log_path())
        payload.update(
            {
                "model_state": self.model.state,
                "model_error": self.model.error,
                "semantic_search_complete": embedded and status.pending_vectors == 0,
                "writes_allowed": self.allow_writes,
                "max_bytes_per_answer": self.max_bytes,
            }
        )
        return self._answer(payload, ("skipped", "sources"))

    # -- writes (only with --allow-writes) ----------------------------------------

    def add_source(self, path: str, git: bool = False, name: str | None = None) -> dict[str, Any]:
        self._require_writes()
        if not os.path.exists(path) and os.path.exists(filesystem_name(path)):
            path = filesystem_name(path)  # a folder not valid UTF-8, named as answers show it (\xNN)
        with self._lock:
            source = (self.ws.link_repo if git else self.ws.add_folder)(path, name=name)
        return self._answer({"added": source.name, "kind": source.kind, "root": source.root, "next": "call index"})

    def index(self, source: str | None = None, embed: bool = True) -> dict[str, Any]:
        self._require_writes()
        with self._lock:
            run = self.ws.index([source] if source else None, embed=embed, lock_wait_seconds=INDEX_LOCK_WAIT_SECONDS)
            self.searcher.forget_caches()  # new words and vectors: caches start afresh
        reports = [
            {
                "source": r.source,
                "files_seen": r.files_seen,
                "added": r.added,
                "changed": r.changed,
                "removed": r.removed,
                "skipped": len(r.skipped),
                "errors": r.errors[:20],
            }
            for r in run.reports
        ]
        return self._answer({"reports": reports}, ("reports",))

    def _require_writes(self) -> None:
        if not self.allow_writes:
            raise KenningError(
                "This server is read-only: start it with `kenning mcp --allow-writes` to change sources."
            )

    def close(self) -> None:
        if self._owns_keeper:
            self.keeper.close()
        with self._lock:
            self.searcher.save_query_vectors(now=True)
        self.ws.close()


def _log_path() -> str | None:
    from kenning.workspace import log_file

    path = log_file()
    return str(path) if path else None


def _within(name: str, value: int, low: int, high: int) -> int:
    if not low <= value <= high:
        raise BadArgument(f"{name} must be from {low} to {high}, not {value}.")
    return value


def _with_filters(query: str, filters: dict[str, Any]) -> str:
    """The query with each given filter appended as `key:"value"` (the syntax users type)."""
    parts = [query]
    for key in FILTERS:
        value = filters.get(key)
        if value:
            parts.append(f'{key}:"{str(value).replace(chr(34), "")}"')
    return " ".join(parts)


def _cut_long_line(line: str, max_chars: int) -> str:
    if len(line) <= max_chars:
        return line
    return line[:max_chars] + f" … [line cut at {max_chars} characters]\n"
