"""The window's side of indexing: full runs (IndexService), the live watcher, their status.

A mixin of MainWindow (kept apart so the window module stays readable): it expects
the window's indexer, watcher, stats, index_status, watch_note, page and say().
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from kenning.gui.status import run_summary

LIVE_REFRESH_SECONDS = 2.0  # while indexing, re-run the query so new text shows up


class LiveIndexMixin:
    """What MainWindow does when the index changes; the window's own parts it uses are
    declared here so the type checker knows them."""

    if TYPE_CHECKING:
        has_sources: bool | None
        query: str
        model: Any
        search_bar: Any
        message: Any
        watch_note: Any
        stats: Any
        indexer: Any
        index_status: Any
        _message_kind: str
        _last_live: float

        def run_search(self, text: str, mode: str) -> int: ...

        def say(self, text: str, *, kind: str = "other") -> None: ...

    def _resume_indexing(self) -> None:
        """A run cut short last time (or files changed while closed) continues now."""
        if self.has_sources is not False:
            self.indexer.start(None)

    def _watched_change(self, update) -> None:
        """A batch of saved, created, renamed or deleted files is in the index."""
        if update.reports:
            files = update.files
            errors = [e for r in update.reports for e in r.errors]
            if not files and not errors:
                return  # temporary files and the like: nothing the index keeps
            text = f"Index updated: {files:,} file{'' if files == 1 else 's'} changed ({update.seconds * 1000:.0f} ms)"
            self.say(text + (f"; {errors[0]}" if errors else ""), kind="index")
            self.stats.refresh()
        if self.query:
            self.run_search(self.query, self.search_bar.mode)

    def _watch_ready(self, count: int) -> None:
        if count and not self.watch_note.toolTip():
            self.watch_note.setText("Live")
            self.watch_note.setToolTip(
                f"Watching {count} source{'' if count == 1 else 's'}: changes appear within seconds"
            )
            self.watch_note.show()

    def _watch_notice(self, text: str) -> None:
        self.watch_note.setText("⚠ watch limit: scanning for changes" if "watch limit" in text else "⚠ watching")
        self.watch_note.setToolTip(text)
        self.watch_note.show()
        self.say(text, kind="watch")

    def cancel_indexing(self) -> None:
        self.index_status.cancelling()
        self.indexer.cancel()

    def _index_started(self) -> None:
        self.index_status.begin()
        if self._message_kind == "index":
            self.say("")  # last run's summary is stale now; the progress tells the story

    def _index_progress(self, progress) -> None:
        self.index_status.update_progress(progress)
        now = time.monotonic()
        if now - self._last_live >= LIVE_REFRESH_SECONDS:
            self._last_live = now
            self.stats.refresh()
            if self.query and not self.model.rowCount():
                self.run_search(self.query, self.search_bar.mode)  # phase 1 commits: results appear

    def _index_finished(self, run, error: str) -> None:
        self.index_status.end()
        self.stats.refresh()
        if error:
            self.say(f"Indexing stopped: {error}")
        elif run is not None and not self.indexer.has_queued:  # never "up to date" while more is coming
            self.say(run_summary(run), kind="index")
        if self.query:
            self.run_search(self.query, self.search_bar.mode)
