"""The two-phase indexer: text for every source first, then embeddings.

Phase 1 for all sources commits before phase 2 starts, so everything is searchable
lexically while the (slow) model works through the backlog.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import field

from kenning.core.errors import KenningError
from kenning.core.fsnames import storable_name
from kenning.core.progress import CancelToken, Progress, ProgressCallback, no_progress
from kenning.core.records import Record
from kenning.core.types import EmbedReport, IndexReport, Source
from kenning.embedding import Embedder
from kenning.ingest.embedphase import embed_pending
from kenning.ingest.embedtext import CONTEXT_SETTING
from kenning.ingest.limits import DEFAULT_SIZE_CAP
from kenning.ingest.textphase import TextOptions, index_text
from kenning.storage.api import Store


class IndexRun(Record):
    reports: list[IndexReport] = field(default_factory=list)
    embedding: EmbedReport | None = None  # None when phase 2 did not run
    cancelled: bool = False


class Indexer:
    def __init__(
        self,
        store: Store,
        embedder_factory: Callable[[], Embedder] | None,
        *,
        size_cap: int = DEFAULT_SIZE_CAP,
        clock: Callable[[], float] = time.time,
        lock_wait_seconds: float = 0.0,
    ) -> None:
        self.store = store
        self._embedder_factory = embedder_factory
        self.size_cap = size_cap
        self.clock = clock
        self.lock_wait_seconds = lock_wait_seconds

    def run(
        self,
        sources: list[Source] | None = None,
        *,
        embed: bool = True,
        on_progress: ProgressCallback = no_progress,
        cancel: CancelToken | None = None,
    ) -> IndexRun:
        cancel = cancel or CancelToken()
        chosen = sources if sources is not None else self.store.sources.list()
        run = IndexRun()
        # The sources it writes, only (a team store lets another machine index the others).
        writes = None if sources is None else [s.id for s in chosen if s.enabled]
        with self.store.indexing_lock(wait_seconds=self.lock_wait_seconds, sources=writes):
            for source in chosen:
                if not source.enabled or cancel.cancelled:
                    continue
                run.reports.append(self._index_source_text(source, on_progress, cancel))
            if embed and self._embedder_factory is not None and not cancel.cancelled:
                run.embedding = self._embed(on_progress, cancel)
        run.cancelled = cancel.cancelled
        return run

    def _index_source_text(self, source: Source, on_progress: ProgressCallback, cancel: CancelToken) -> IndexReport:
        on_progress(Progress(phase="scanning", done=0, source=source.name, current=source.root))
        commit_times = None
        try:
            if source.kind == "git":
                on_progress(Progress(phase="git", done=0, source=source.name, current=source.root))
                commit_times = self.refresh_git(source)
            options = TextOptions(self.size_cap, commit_times, self._contextual_input())
            report = index_text(self.store, source, options, on_progress, cancel)
        except KenningError as exc:
            return IndexReport(source=source.name, errors=[str(exc)])
        except OSError as exc:
            return IndexReport(source=source.name, errors=[f"{source.root}: {exc}"])
        except (ValueError, LookupError, RuntimeError) as exc:
            # Odd data from one source (a name, a history) must not end the run for the
            # others, nor keep phase 2 from running.  Store errors still propagate.
            return IndexReport(source=source.name, errors=[f"{source.root}: unexpected {type(exc).__name__}: {exc}"])
        if not report.cancelled:
            self.store.sources.mark_indexed(source.id, self.clock())
        return report

    def refresh_git(self, source: Source) -> dict[str, tuple[float, float]]:
        """One pass over the history: per-path commit times, and the git signal's table.

        Keys are stored names (see core.fsnames), as the walker stores documents, so a
        name that is not valid UTF-8 is one more path, never the end of the run.  The
        source's root must be the top of its own work tree (exact_root).
        """
        from kenning.gitinfo import list_files, path_commit_times

        times = {storable_name(p): t for p, t in path_commit_times(source.root, exact_root=True).items()}
        current = [storable_name(p) for p in list_files(source.root, exact_root=True)]
        self.store.git.replace(source.id, {p: (times[p][1] if p in times else None) for p in current})
        return times

    def _contextual_input(self) -> bool:
        return self.store.settings.get(CONTEXT_SETTING) != "off"

    def _embed(self, on_progress: ProgressCallback, cancel: CancelToken) -> EmbedReport:
        assert self._embedder_factory is not None  # run() embeds only with a factory
        embedder = self._embedder_factory()
        return embed_pending(self.store, embedder, on_progress, cancel, self._contextual_input())
