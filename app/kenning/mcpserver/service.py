"""What each MCP tool does, as plain methods returning bounded JSON text.

Kept apart from the SDK wiring (server.py) so the behaviour is testable in-process and
the protocol layer stays a list of declarations. The store is used by one tool call at
a time (the SDK runs synchronous tools on worker threads).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from kenning.core.errors import KenningError
from kenning.core.types import Hit
from kenning.mcpserver import bounds
from kenning.mcpserver.model import BackgroundModel
from kenning.search.engine import SearchEngine
from kenning.search.related import related_to_document
from kenning.workspace import Workspace, search_options
from kenning.workspace.documents import document_lines, resolve_document

MAX_LIMIT = 50
RELATED_LOADING = "semantic model still loading: ask again shortly"
RELATED_UNAVAILABLE = "semantic search unavailable ({}): related notes need the model"
FILTERS = ("source", "path", "tag", "ext", "after", "before")


class KenningService:
    """The tools' behaviour over one Workspace (one connection, used by one call at a time).

    record turns a hit into the JSON record of `kenning search --json --explain`; the
    CLI that starts the server hands it over, so both front ends answer alike.
    """

    def __init__(
        self,
        workspace: Workspace,
        record: Callable[[Hit, bool], dict],
        *,
        max_bytes: int = bounds.DEFAULT_MAX_BYTES,
        allow_writes: bool = False,
        background_model: BackgroundModel | None = None,
    ) -> None:
        self.ws = workspace
        self.record = record
        self.max_bytes = max(bounds.MIN_MAX_BYTES, max_bytes)
        self.allow_writes = allow_writes
        self._lock = threading.RLock()
        self.model = background_model or BackgroundModel(self._load_model).start()
        self._engines: dict[bool, SearchEngine] = {}

    def _load_model(self):
        # Only the model is loaded on the background thread: the store stays on tool calls.
        from kenning.embedding import QUERY_THREADS
        from kenning.workspace import EmbedderFactory

        with self._lock:
            name = self.ws.model_name
        return EmbedderFactory(name, threads=QUERY_THREADS)()

    # -- search -------------------------------------------------------------------

    def search(self, query: str, limit: int = 10, mode: str = "hybrid", explain: bool = True, **filters) -> str:
        text = _with_filters(query, filters)
        with self._lock:
            embedder = self.model.embedder
            plan = self.ws.plan(mode, embedder, self.model.error)
            engine = self._engine(plan.semantic, embedder)
            options = search_options(self.ws.settings, plan.mode, limit=max(1, min(limit, MAX_LIMIT)))
            result = engine.search(text, options)
        payload = {
            "query": result.query,
            "mode": plan.mode,
            "notes": ([plan.note] if plan.note else []) + list(result.notes),
            "corrections": result.corrections,
            "did_you_mean": result.suggestion,
            "hits": [self.record(hit, explain) for hit in result.hits],
        }
        return bounds.fit_list(payload, "hits", self.max_bytes)

    def _engine(self, semantic: bool, embedder) -> SearchEngine:
        """One engine per kind, kept: their vocabulary and vector caches outlive a call."""
        if semantic not in self._engines:
            self._engines[semantic] = SearchEngine(self.ws.store, embedder if semantic else None)
        return self._engines[semantic]

    # -- read and related ---------------------------------------------------------

    def read(self, path: str, source: str | None = None, start_line: int = 1, end_line: int | None = None) -> str:
        with self._lock:
            found = resolve_document(self.ws.store, path, source)
            lines, note = document_lines(self.ws.store, found, self.ws.settings.size_cap)
        payload: dict[str, Any] = {
            "source": found.source.name,
            "path": found.document.rel_path,
            "abs_path": str(found.real_path),
        }
        if note:
            payload["note"] = note
        first = max(1, start_line)
        last = len(lines) if end_line is None else min(len(lines), end_line)
        payload["total_lines"] = len(lines)
        wanted = [_cut_long_line(line, self.max_bytes // 2) for line in lines[first - 1 : last]]
        return bounds.fit_lines(payload, wanted, first, self.max_bytes)

    def related(self, path: str, source: str | None = None, limit: int = 10) -> str:
        limit = max(1, min(limit, MAX_LIMIT))
        with self._lock:
            found = resolve_document(self.ws.store, path, source)
            payload: dict[str, Any] = {
                "source": found.source.name,
                "path": found.document.rel_path,
                "notes": [],
                "related": [],
            }
            embedder = self.model.embedder
            if embedder is None:
                payload["notes"].append(
                    RELATED_LOADING if self.model.state == "loading" else RELATED_UNAVAILABLE.format(self.model.error)
                )
                return bounds.fit_list(payload, "related", self.max_bytes)
            # The semantic engine's vector index: its matrix is loaded once, not per call.
            vectors = self._engine(True, embedder).vectors
            assert vectors is not None  # an engine made with an embedder has one
            found_docs = related_to_document(vectors, found.document.id, limit)
        if found_docs is None:
            payload["notes"].append("this file has no vectors yet: run `kenning index` to embed it")
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
        return bounds.fit_list(payload, "related", self.max_bytes)

    # -- sources and status -------------------------------------------------------

    def sources(self) -> str:
        with self._lock:
            payload = {"sources": self._source_records()}
        return bounds.fit_list(payload, "sources", self.max_bytes)

    def _source_records(self) -> list[dict]:
        overview = self.ws.overview()
        out = []
        for s in overview.sources:
            st = overview.stats.get(s.id)
            out.append(
                {
                    "name": s.name,
                    "kind": s.kind,
                    "root": s.root,
                    "enabled": s.enabled,
                    "last_indexed": _iso(s.last_indexed_at),
                    "documents": st.documents if st else 0,
                    "chunks": st.chunks if st else 0,
                    "vectors_pending": st.pending_vectors if st else 0,
                    "skipped_files": st.skipped if st else 0,
                }
            )
        return out

    def status(self) -> str:
        with self._lock:
            status = self.ws.status()
            embedder = self.model.embedder
            embedded = embedder is not None and self.ws.has_vectors(embedder)
            payload = {
                "store": str(status.path),
                "model": status.model,
                "model_state": self.model.state,
                "model_error": self.model.error,
                "documents": status.overview.documents,
                "chunks": status.overview.chunks,
                "vectors_pending": status.pending_vectors,
                "semantic_search_complete": embedded and status.pending_vectors == 0,
                "vector_index": "sqlite-vec" if status.vec_error is None else f"unavailable ({status.vec_error})",
                "skipped_files": len(status.skipped),
                "writes_allowed": self.allow_writes,
                "max_bytes_per_answer": self.max_bytes,
                "sources": self._source_records(),
            }
        return bounds.fit_list(payload, "sources", self.max_bytes)

    # -- writes (only with --allow-writes) ----------------------------------------

    def add_source(self, path: str, git: bool = False, name: str | None = None) -> str:
        self._require_writes()
        with self._lock:
            source = (self.ws.link_repo if git else self.ws.add_folder)(path, name=name)
        return bounds.dumps({"added": source.name, "kind": source.kind, "root": source.root, "next": "call index"})

    def index(self, source: str | None = None, embed: bool = True) -> str:
        self._require_writes()
        with self._lock:
            run = self.ws.index([source] if source else None, embed=embed)
            self._engines.clear()  # new words and vectors: caches start afresh
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
        return bounds.fit_list({"reports": reports}, "reports", self.max_bytes)

    def _require_writes(self) -> None:
        if not self.allow_writes:
            raise KenningError(
                "This server is read-only: start it with `kenning mcp --allow-writes` to change sources."
            )

    def close(self) -> None:
        self.ws.close()


def _with_filters(query: str, filters: dict) -> str:
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


def _iso(when: float | None) -> str | None:
    return None if when is None else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when))
