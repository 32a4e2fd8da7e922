"""The main window: wires the search bar, results, detail pane, sources page and workers."""

from __future__ import annotations

import gc
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QApplication,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QMessageBox,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from kenning.core.fsnames import shown
from kenning.core.types import Hit, SearchResult
from kenning.embedding import Embedder
from kenning.gui import crash, style, window_state
from kenning.gui.about import open_log_folder, show_about
from kenning.gui.history import HISTORY_KEY, SETTLE_MS, SearchHistory
from kenning.gui.live_index import LiveIndexMixin
from kenning.gui.menus import build_menus
from kenning.gui.opener import Opener
from kenning.gui.preview import copy_path
from kenning.gui.preview_views import ElidedLabel
from kenning.gui.search_bar import SearchBar, filter_chips
from kenning.gui.search_page import SearchPage
from kenning.gui.settings_dialog import SettingsDialog
from kenning.gui.single_instance import InstanceServer
from kenning.gui.source_jobs import SourceJobs
from kenning.gui.sources_panel import SourcesPanel
from kenning.gui.status import IndexStatus
from kenning.gui.tag_pane import toggle_tag_filter
from kenning.gui.team_store import TeamStoreMixin
from kenning.gui.watch_service import WatchService
from kenning.gui.welcome import WelcomePage
from kenning.gui.workers import (
    EmbedderHolder,
    IndexService,
    SearchService,
    StatsService,
    index_embedder_factory,
    query_embedder_factory,
)
from kenning.workspace import SettingsError, Workspace

SEARCHING_NOTICE_MS = 150  # a search slower than this says "Searching…"
PAGE_WELCOME, PAGE_SEARCH, PAGE_SOURCES = range(3)


class MainWindow(TeamStoreMixin, LiveIndexMixin, QMainWindow):
    def __init__(
        self,
        store_path: Path,
        *,
        embedder_factory: Callable[[], Embedder] | None = None,
        auto_index: bool = True,
        watch: bool | None = None,
    ) -> None:
        super().__init__()
        self.setWindowTitle("Kenning")
        self.setWindowIcon(style.app_icon())
        self.store_path = Path(store_path)
        # The window's own connection: settings and layout (small reads at start and close).
        self.workspace = Workspace(self.store_path)
        self.settings = self.workspace.settings
        style.apply_theme(QApplication.instance(), self.settings.theme)
        self.holder = EmbedderHolder(embedder_factory or query_embedder_factory(self.workspace))
        self.search_service = SearchService(self.store_path, self.holder, self)
        # The indexing process reads the size cap and model from the settings itself.
        self.indexer = IndexService(self.store_path, embedder_factory or index_embedder_factory(self.workspace), self)
        self.stats = StatsService(self.store_path, self)
        self.source_jobs = SourceJobs(self.store_path, self)
        self.watcher = WatchService(self.store_path, embedder_factory or index_embedder_factory(self.workspace), self)
        self.query = ""
        self.query_mode = ""
        self._open_on_arrival: bool | None = None  # Enter came before the new query's results: folder?
        self.has_sources: bool | None = None
        self._last_live = 0.0
        self._message_kind = "other"
        self.problems: list[str] = []  # what show_problem said (tests and the log read it)
        self.errors = crash.ErrorReporter(self.store_path, self)
        self.errors.reported.connect(self.show_error)
        crash.install(self.errors)  # from here on no exception is only printed to stderr
        self.instance = InstanceServer(self.store_path, self)
        self.instance.raise_requested.connect(self.come_forward)
        self.opener = Opener(self)
        self.opener.problem.connect(self.show_problem)
        self.history = SearchHistory(self.workspace.load_state(HISTORY_KEY, []) or [])
        self._settle = QTimer(self, singleShot=True, interval=SETTLE_MS, timeout=self._remember)
        self._searching_soon = QTimer(self, singleShot=True, interval=SEARCHING_NOTICE_MS)
        self._searching_soon.timeout.connect(lambda: self.page.set_searching(True))
        self._build()
        self.search_bar.set_history(self.history.entries)
        self._connect()
        self._build_team()  # a remembered team store connects at once (gui/team_store.py)
        self.sources_panel.team_requested.connect(self.open_team_dialog)
        self._shortcuts()
        self._restore_layout()
        self.search_service.load_model()
        # Search until the source list says otherwise: no welcome-page flash at start.
        self.show_page(PAGE_SEARCH)
        self.stats.refresh()
        if auto_index:
            QTimer.singleShot(400, self._resume_indexing)
        if auto_index if watch is None else watch:
            self.watcher.start()  # changes while the window is open are indexed as they happen

    # -- construction --------------------------------------------------------------

    def _build(self) -> None:
        self.search_bar = SearchBar(self)
        self.search_bar.set_fusion(self.settings.fusion)
        self.page = SearchPage(self)
        self.page.preview.extracted_text = self._extracted_text
        self.page.preview.analyzer = lambda: self.workspace.analyzer
        self.sources_panel = SourcesPanel(self.source_jobs, self)
        self.welcome = WelcomePage(self)
        self.index_status = IndexStatus(self)
        # Long messages end at a word with "…" (the tooltip has it all), never under the progress.
        self.message = ElidedLabel(self, words=True, mode=Qt.TextElideMode.ElideRight)
        self.message.setObjectName("muted")
        self.watch_note = QLabel(self, objectName="muted")
        self.watch_note.hide()
        self.stack = QStackedWidget(self)
        self.stack.addWidget(self.welcome)
        self.stack.addWidget(self.page)
        self.stack.addWidget(self.sources_panel)
        central = QWidget(self)
        layout = QVBoxLayout(central)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self._top_bar())
        layout.addWidget(self.stack, 1)
        self.setCentralWidget(central)
        self.statusBar().addWidget(self.message, 1)
        self.statusBar().addPermanentWidget(self.watch_note)
        self.statusBar().addPermanentWidget(self.index_status)

    def _top_bar(self) -> QWidget:
        bar = QWidget(self)
        layout = QHBoxLayout(bar)
        layout.setContentsMargins(14, 12, 14, 8)
        self.search_tab = QToolButton(bar, text="Search", checkable=True, checked=True, toolTip="Search (Ctrl+1)")
        self.sources_tab = QToolButton(bar, text="Sources", checkable=True, toolTip="Sources (Ctrl+2)")
        self.settings_button = QToolButton(bar, text="⚙", toolTip="Settings (Ctrl+,)")
        self.search_tab.clicked.connect(lambda: self.show_page(PAGE_SEARCH))
        self.sources_tab.clicked.connect(lambda: self.show_page(PAGE_SOURCES))
        self.settings_button.clicked.connect(self.open_settings)
        self.help_button = QToolButton(bar, text="?", toolTip="About Kenning, shortcuts, log file (F1)")
        self.help_button.clicked.connect(lambda: show_about(self, self.store_path))
        layout.addWidget(self.search_tab, 0, Qt.AlignmentFlag.AlignTop)
        layout.addWidget(self.sources_tab, 0, Qt.AlignmentFlag.AlignTop)
        layout.addSpacing(8)
        layout.addWidget(self.search_bar, 1)
        layout.addWidget(self.settings_button, 0, Qt.AlignmentFlag.AlignTop)
        layout.addWidget(self.help_button, 0, Qt.AlignmentFlag.AlignTop)
        return bar

    def _connect(self) -> None:
        sb = self.search_bar
        sb.search_requested.connect(self.run_search)
        sb.cleared.connect(self.clear_results)
        sb.move_selection.connect(self.page.move_selection)
        sb.activate.connect(lambda folder: self.open_current(folder))
        self.page.open_requested.connect(self.open_hit)
        self.page.related_wanted.connect(self.search_service.find_related)
        self.search_bar.recall_requested.connect(self._recall)
        self.search_bar.history_cleared.connect(self.clear_history)
        self.page.tag_pane.tag_clicked.connect(
            lambda tag: self.search_bar.set_text(toggle_tag_filter(self.search_bar.text, tag))
        )
        self.stats.tags_ready.connect(self.page.tag_pane.set_counts)
        self.search_bar.field.textChanged.connect(
            lambda text: self.page.tag_pane.show_active({v for k, v in filter_chips(text) if k == "tag"})
        )
        self.search_service.related.connect(self.page.set_related)
        self.page.suggestion_clicked.connect(lambda: self.search_bar.set_text(self.page.result.suggestion or ""))
        self.search_service.results.connect(self.show_results)
        self.search_service.totals.connect(lambda _rid, total: self.page.show_total(total))
        self.search_service.failed.connect(self._search_failed)
        self.search_service.model_ready.connect(self._model_ready)
        self.indexer.started.connect(self._index_started)
        self.indexer.progress.connect(self._index_progress)
        self.indexer.finished.connect(self._index_finished)
        self.index_status.cancel_requested.connect(self.cancel_indexing)
        self.stats.ready.connect(self._stats_ready)
        self.sources_panel.reindex_requested.connect(self.indexer.start)
        self.sources_panel.changed.connect(self.stats.refresh)
        self.sources_panel.changed.connect(lambda: self.forget("index", "watch"))  # counts of a source changed
        self.sources_panel.search_within.connect(lambda query: self.search_bar.set_text(query))
        self.welcome.add_folder.connect(lambda: self.sources_panel.add_folder())
        self.welcome.link_repo.connect(lambda: self.sources_panel.link_repo())
        self.watcher.changed.connect(self._watched_change)
        self.watcher.notice.connect(self._watch_notice)
        self.watcher.ready.connect(self._watch_ready)

    def _shortcuts(self) -> None:
        self.command_actions = build_menus(self, self._command_handlers())
        QShortcut(QKeySequence("Escape"), self, activated=self._escape)

    def _copy_current_path(self) -> None:
        hit = self.current_hit()
        if hit is not None:
            copy_path(hit.abs_path)

    def _command_handlers(self) -> dict[str, Callable[[], object]]:
        """What each command of the menu bar (gui/shortcuts.py) does."""
        preview = self.page.preview
        return {
            "add_folder": lambda: self.sources_panel.add_folder(),
            "link_repo": lambda: self.sources_panel.link_repo(),
            "reindex_all": lambda: self.indexer.start(None),
            "team_store": self.open_team_dialog,
            "settings": self.open_settings,
            "quit": self.close,
            "focus_search": self.search_bar.focus,
            "open_folder": lambda: self.open_current(True),
            "copy_path": self._copy_current_path,
            "expand": self.page.toggle_group,
            "find": preview.show_find,
            "next_match": lambda: preview.step_or_find(1),
            "previous_match": lambda: preview.step_or_find(-1),
            "page_search": lambda: self.show_page(PAGE_SEARCH),
            "page_sources": lambda: self.show_page(PAGE_SOURCES),
            "about": lambda: show_about(self, self.store_path),
            "log_folder": open_log_folder,
        }

    # -- search --------------------------------------------------------------------

    def run_search(self, text: str, mode: str) -> int:
        self.query = text
        self.query_mode = mode
        self.show_page(PAGE_SEARCH)
        self._searching_soon.start()  # quick answers never flash the notice
        return self.search_service.submit(text, mode, self.settings)

    def show_results(self, _request_id: int, result: SearchResult) -> None:
        self._searching_soon.stop()
        self.page.set_searching(False)
        self.page.show_results(result, self.query, self.query_mode, self.settings.limit)
        if self._open_on_arrival is not None:  # Enter was pressed while this answer was on its way
            folder, self._open_on_arrival = self._open_on_arrival, None
            self.open_current(folder)
        self._settle.start()  # still on screen in a moment: it joins the history
        # The search's own notes replace the previous search's, never other news
        # (an index update, a watch notice) that came in since.
        if result.notes:
            self.say("; ".join(result.notes), kind="search")
        elif self._message_kind == "search":
            self.say("")

    def _search_failed(self, _request_id: int, message: str) -> None:
        self._open_on_arrival = None
        self._searching_soon.stop()
        self.page.set_searching(False)
        self.say(f"Search failed: {message}", kind="search")

    def say(self, text: str, *, kind: str = "other") -> None:
        """The status bar's message; its kind lets the next news of that kind replace it, and
        lets news that makes it stale clear it (forget)."""
        self.message.setText(shown(text))  # a path not UTF-8 in it reads \xNN (Qt would drop the byte)
        self._message_kind = kind
        name = "error" if kind == "error" else "muted"
        if self.message.objectName() != name:
            self.message.setObjectName(name)
            self.message.style().unpolish(self.message)
            self.message.style().polish(self.message)

    def forget(self, *kinds: str) -> None:
        """Clear the status bar when what it says is of one of these kinds (now stale)."""
        if self._message_kind in kinds:
            self.say("")

    def clear_results(self) -> None:
        self.search_service.cancel_pending()  # late answers for the old text are dropped
        self._searching_soon.stop()
        self.query = ""
        self._open_on_arrival = None
        self.page.clear()

    # The page's parts, as tests and the benchmark know them.
    model = property(lambda self: self.page.model)
    list = property(lambda self: self.page.list)
    delegate = property(lambda self: self.page.delegate)
    preview = property(lambda self: self.page.preview)
    breakdown = property(lambda self: self.page.breakdown)
    banner = property(lambda self: self.page.banner)
    suggestion = property(lambda self: self.page.suggestion)
    summary = property(lambda self: self.page.summary)
    result = property(lambda self: self.page.result)

    def current_hit(self) -> Hit | None:
        return self.page.current_hit()

    def select_row(self, row: int) -> None:
        self.page.select_row(row)

    def open_current(self, folder: bool) -> None:
        """Open the selected hit; while a new query's answer is on its way, its #1 once it is here
        (the list still shows the previous query's hits)."""
        if self.query and (self.page.query, self.page.mode) != (self.query, self.query_mode):
            self._open_on_arrival = folder
            return
        hit = self.current_hit()
        if hit is not None:
            self.open_hit(hit, folder)

    def _remember(self) -> None:
        if self.query and self.history.add(self.query):
            self._history_changed()

    def _recall(self) -> None:
        if self.history.last:
            self.search_bar.set_text(self.history.last)

    def clear_history(self) -> None:
        self.history.clear()
        self._history_changed()

    def _history_changed(self) -> None:
        entries = list(self.history.entries)
        self.search_bar.set_history(entries)
        self.source_jobs.submit(
            "saving the search history", lambda ws: ws.save_state(HISTORY_KEY, entries), lambda _: None, self.say
        )

    def open_hit(self, hit: Hit, folder: bool) -> None:
        self._remember()  # opening a result is the surest sign the query was meant
        self.opener.editor = self.settings.editor
        self.opener.open_hit(hit, folder)

    def come_forward(self) -> None:
        """A second start on this store: this window shows itself instead."""
        self.showNormal() if self.isMinimized() else self.show()
        self.raise_()
        self.activateWindow()
        self.say("Kenning was started again on this store: this window is the one.")

    def show_problem(self, text: str) -> None:
        """A failure the user must act on: in the status bar and a (non-blocking) message box."""
        self.say(text, kind="editor")
        self.problems.append(text)
        box = QMessageBox(QMessageBox.Icon.Warning, "Kenning could not open the file", text, parent=self)
        box.setStandardButtons(QMessageBox.StandardButton.Close)
        box.open()
        self._problem_box = box

    def show_error(self, message: str) -> None:
        """An exception nobody caught (logged with its traceback): one line in the status bar."""
        self.say(" ".join(message.split()), kind="error")

    def _escape(self) -> None:
        find_bar = self.page.preview.find_bar
        focused = QApplication.focusWidget()
        if find_bar.isVisible() and focused is not None and find_bar.isAncestorOf(focused):
            find_bar.close_bar()  # Esc leaves the find bar first, the query stays
            return
        if self.search_bar.text:
            self.search_bar.field.clear()
        self.search_bar.focus()

    def _model_ready(self, name: str) -> None:
        # Everything built so far (Qt wrappers, modules, the model) lives as long as the
        # app: freezing it keeps full garbage collections, which run with the GIL held
        # from whichever thread triggers them, from rescanning it (measured: 50-70 ms
        # gen-2 pauses in the search thread froze the window while indexing).
        gc.freeze()
        if name:
            self.say(f"Semantic search ready ({name})", kind="model")
        else:
            self.say(f"Lexical search only: {self.holder.error}", kind="model")
        if self.query:
            self.run_search(self.query, self.search_bar.mode)

    # -- pages, sources, indexing ---------------------------------------------------

    def show_page(self, page: int) -> None:
        if page == PAGE_SEARCH and self.has_sources is False:
            page = PAGE_WELCOME
        self.stack.setCurrentIndex(page)
        self.search_tab.setChecked(page in (PAGE_SEARCH, PAGE_WELCOME))
        self.sources_tab.setChecked(page == PAGE_SOURCES)

    def _stats_ready(self, sources, stats) -> None:
        self.sources_panel.set_data(sources, stats)
        self.has_sources = bool(sources)
        if not self.has_sources and self.stack.currentIndex() == PAGE_SEARCH:
            self.show_page(PAGE_WELCOME)
        elif self.has_sources and self.stack.currentIndex() == PAGE_WELCOME:
            self.show_page(PAGE_SEARCH)

    def open_settings(self) -> None:
        dialog = SettingsDialog(self.workspace, str(self.store_path.parent), self)
        if dialog.exec():
            try:
                self.settings, model_changed = dialog.apply_later(
                    self.source_jobs, lambda message: self.say(f"Settings not saved: {message}", kind="settings")
                )
            except SettingsError as exc:  # e.g. a custom editor command without {file}
                self.say(f"Settings not saved: {exc}")
                return
            style.apply_theme(QApplication.instance(), self.settings.theme)
            self.search_bar.set_fusion(self.settings.fusion)
            self.forget("editor", "settings")  # an editor's failure, or a save that failed: old news now
            if model_changed:
                self.say("Model changed: restart Kenning to re-embed with it.", kind="settings")
            if self.query:
                self.run_search(self.query, self.search_bar.mode)

    # -- layout persistence and shutdown ---------------------------------------------

    def _restore_layout(self) -> None:
        window_state.restore(self)

    def save_layout(self) -> None:
        window_state.save(self)

    def closeEvent(self, event) -> None:
        if not getattr(self, "_closed", False):
            self.save_layout()
            self.shutdown()
        super().closeEvent(event)

    def _extracted_text(self, hit) -> str | None:
        """The indexed text of an extracted document (PDF, notebook, mail) for the preview.

        Read on the window's own connection: the search service's is busy on its thread
        just when a new result's first hit is shown, and waiting for its lock blocked
        the window 30-40 ms (bench_gui_responsiveness.py --profile).  The lookup itself
        is one indexed row; WAL readers never wait for the indexer."""
        if getattr(self, "_closed", False):
            return None  # a detail-pane update queued before the window closed
        return self.workspace.extracted_text(hit.source, hit.path)

    def shutdown(self) -> None:
        """Cancel indexing and wait for it: batches are committed, the next start resumes."""
        if getattr(self, "_closed", False):
            return
        self._closed = True
        crash.uninstall(self.errors)
        self.instance.close()
        self.watcher.shutdown()
        self.indexer.shutdown()
        self.team_watch.shutdown()
        self.search_service.shutdown()
        self.stats.shutdown()
        self.source_jobs.shutdown()
        QApplication.processEvents()
        self.workspace.close()
