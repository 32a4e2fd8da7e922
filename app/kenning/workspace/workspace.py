"""A store opened for a front end, with everything a front end asks of it.

One Workspace holds one connection.  apsw serialises the use of a connection, so a
front end that works on several threads opens one Workspace per thread family (the
app: its window, its search thread, its stats reader each have their own).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import replace
from functools import cached_property
from pathlib import Path

from kenning import TYPE_CHECKING
from kenning.core.errors import StoreError
from kenning.core.logger import get_logger
from kenning.core.records import Record
from kenning.core.types import SkippedFile, Source
from kenning.embedding import QUERY_THREADS
from kenning.storage import needs_upgrade, open_store
from kenning.storage.api import Analyzer, Store
from kenning.storage.paths import default_store_path, model_cache_dir
from kenning.workspace import settings as settings_mod
from kenning.workspace import sources, teamstore
from kenning.workspace.eta import seconds_until_semantic, semantic_status
from kenning.workspace.searching import SearchPlan, plan_search
from kenning.workspace.settings import ENVIRONMENT, Settings

if TYPE_CHECKING:  # the indexer (and what it imports) loads only for commands that index
    from typing import Any

    from kenning.core.progress import CancelToken, ProgressCallback
    from kenning.embedding import Embedder
    from kenning.ingest.indexer import IndexRun
    from kenning.search.remembered import RememberingEmbedder
    from kenning.workspace.documents import ResolvedDocument
    from kenning.workspace.searcher import Searcher

log = get_logger(__name__)

if TYPE_CHECKING:
    from kenning.ingest.watch import Watcher, WatchUpdate
    from kenning.workspace.links import Link, LinkGraph, NoteLinks


class EmbedderFactory:
    """Makes the embedder for a model name; picklable, so the app's indexing process can use it."""

    def __init__(self, name: str, threads: int | None = None, *, few_runs: bool = False) -> None:
        self.name = name
        self.threads = threads
        self.few_runs = few_runs  # a process embedding one command's query (resolve_embedder)

    def __call__(self) -> Embedder:
        from kenning.embedding import resolve_embedder  # the model modules load when a model is wanted

        return resolve_embedder(self.name, model_cache_dir(), threads=self.threads, few_runs=self.few_runs)


class StoreStatus(Record, frozen=True):
    """What `kenning status` shows (and what a future status page would)."""

    path: Path
    size_bytes: int
    model: str
    overview: sources.SourceOverview
    pending_vectors: int
    skipped: list[tuple[str, SkippedFile]]  # (source name, file)
    embedding_rate: float | None = None  # chunks/s the model last reached here (None: never measured)

    @property
    def semantic_eta_seconds(self) -> float | None:
        """Embedding time until every chunk has a vector (0: complete; None: rate unknown)."""
        return seconds_until_semantic(self.pending_vectors, self.embedding_rate)

    @property
    def semantic_text(self) -> str:
        """The line a front end shows about semantic search's coverage (workspace/eta.py)."""
        return semantic_status(self.pending_vectors, self.embedding_rate)


def store_needs_upgrade(store_path: Path | str | None = None) -> bool:
    """Whether opening the store will first convert it from an older layout (minutes
    for a large one): the app shows a window meanwhile, the CLI prints each step."""
    return needs_upgrade(Path(store_path) if store_path else default_store_path())


class Workspace:
    """The store at store_path (default: the user's), opened on first use."""

    def __init__(
        self,
        store_path: Path | str | None = None,
        *,
        model: str | None = None,
        environ: Mapping[str, str] | None = None,
        on_upgrade: Callable[[str], None] | None = None,
        borrow: Workspace | None = None,
    ) -> None:
        """borrow: use that Workspace's open store (its one connection), never closed here:
        one client's view of the store inside the service, with the client's settings
        environment and --model (cli.served)."""
        # A team store's connection string stays as given (in memory only: it may hold a
        # password); messages and logs name it by `location` (workspace.teamstore).
        self.team_target = str(store_path).strip() if teamstore.is_team_target(store_path) else None
        self.store_path: Path | str = self.team_target or (Path(store_path) if store_path else default_store_path())
        self._others: dict[str, Workspace] = {}  # stores searched together with this one (also())
        self._on_upgrade = on_upgrade  # hears each step when opening converts an older store
        self._model_flag = model  # `--model` for one command: stronger than the environment
        self._environ = environ
        self._lender = borrow
        if borrow is not None:
            self.__dict__["store"] = borrow.store

    @cached_property
    def store(self) -> Store:
        if self.team_target is not None:
            team = teamstore.open_team_store(self.team_target, report=self._upgrade_step)
            log.debug("opened the team store %s", team.location)
            return team
        store = open_store(self.store_path, report=self._upgrade_step)
        log.debug("opened the store %s", store.location)
        return store

    def open(self) -> None:
        """Open the store now (converting an older one) rather than on first use."""
        _ = self.store

    @property
    def location(self) -> str:
        """The store as messages name it: its file, or user@host/database (never a password)."""
        return teamstore.label(self.team_target) if self.team_target else str(self.store_path)

    @property
    def is_team(self) -> bool:
        return self.team_target is not None

    @property
    def store_label(self) -> str:
        """The short name hits carry when several stores are searched together."""
        return teamstore.short_label(self.team_target) if self.team_target else "personal"

    def also(self, other: Workspace) -> None:
        """Search `other`'s store together with this one (one list; its hits labelled).
        Both stores' vectors must come from one model (a clear error otherwise)."""
        from kenning.storage import model_mismatch
        from kenning.workspace.messages import model_mismatch_message

        models = model_mismatch({self.store_label: self.store, other.store_label: other.store})
        if models:
            raise StoreError(model_mismatch_message(models))
        self._others[other.store_label] = other

    def team_info(self) -> teamstore.TeamStoreInfo:
        """What the app's status bar says of a team store (a few small queries)."""
        if self.team_target is None:
            raise StoreError(f"{self.location} is not a team store.")
        return teamstore.describe(self.store)

    def detach(self) -> None:
        """Search this store alone again (closing the others' connections)."""
        others, self._others = list(self._others.values()), {}
        self.__dict__.pop("_combined", None)
        for other in others:
            other.close()

    @property
    def searching_together(self) -> bool:
        return bool(self._others)

    @property
    def search_store(self) -> Store:
        """What searches read: this store, or it and the stores given to also() as one."""
        if not self._others:
            return self.store
        from kenning.storage import search_together

        stores = {self.store_label: self.store, **{label: w.store for label, w in self._others.items()}}
        kept = self.__dict__.get("_combined")
        if kept is None or kept[0] != list(stores.values()):
            kept = self.__dict__["_combined"] = (list(stores.values()), search_together(stores))
        return kept[1]

    @property
    def analyzer(self) -> Analyzer:
        """The store's own tokenizer and stemmer: what a front end highlights with."""
        return self.store.analyzer

    def _upgrade_step(self, message: str) -> None:
        log.info("%s", message)
        if self._on_upgrade is not None:
            self._on_upgrade(message)

    def close(self) -> None:
        if self._lender is not None:
            self.__dict__.pop("store", None)  # the lender's to close
        elif "store" in self.__dict__:
            self.store.close()
            del self.__dict__["store"]
        self.__dict__.pop("_combined", None)
        for other in self._others.values():
            other.close()
        self._others.clear()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- settings ------------------------------------------------------------------

    @property
    def settings(self) -> Settings:
        """The settings in effect (read afresh: another front end may have changed them)."""
        effective = settings_mod.effective_settings(self.store, self._environ)
        if self._model_flag:
            effective = replace(effective, embedding_model=self._model_flag)
        return effective

    def stored_settings(self) -> Settings:
        return settings_mod.stored_settings(self.store)

    def update_settings(self, **changes: Any) -> Settings:
        """Store the changed settings; returns the settings now in effect."""
        settings_mod.save_settings(self.store, **changes)
        log.info("settings changed: %s", ", ".join(sorted(changes)))
        return self.settings

    def reset_settings(self, *names: str) -> Settings:
        settings_mod.reset_settings(self.store, *names)
        return self.settings

    def fixed_settings(self) -> dict[str, str]:
        """Settings the user cannot change from here, and what fixes them (a variable or flag)."""
        environ = os.environ if self._environ is None else self._environ
        fixed = {name: var for name, var in ENVIRONMENT.items() if environ.get(var, "").strip()}
        if self._model_flag:
            fixed["embedding_model"] = "--model"
        return fixed

    @property
    def model_name(self) -> str:
        return self.settings.embedding_model

    # -- models and search ---------------------------------------------------------

    def embedder_factory(self, *, threads: int | None = None, few_runs: bool = False) -> EmbedderFactory:
        return EmbedderFactory(self.model_name, threads=threads, few_runs=few_runs)

    @cached_property
    def embedder(self) -> Embedder:
        """For indexing: every core."""
        return self.embedder_factory()()

    @cached_property
    def query_embedder(self) -> Embedder:
        """For a command that embeds its query and ends (see QUERY_THREADS): the session is
        made for few runs (embedding.bundled_runner); the app and the service make their own."""
        return self.embedder_factory(threads=QUERY_THREADS, few_runs=True)()

    def interrupt(self) -> None:
        """Stop the store statement running now (another thread's), if the store is open."""
        # Not (yet) a member of storage.api.Store: the SQLite backend's connection has it.
        stop = getattr(self.__dict__.get("store"), "interrupt", None)
        if stop is not None:
            stop()

    def has_vectors(self, embedder: Embedder) -> bool:
        return self.store.vectors.has_vectors(embedder.fingerprint)

    def plan(self, mode: str, embedder: Embedder | None, model_error: str | None = None) -> SearchPlan:
        """The mode a query runs in with this embedder (None: not loaded yet); see searching."""
        ready = mode != "lexical" and embedder is not None and self.has_vectors(embedder)
        plan = plan_search(mode, model_loaded=embedder is not None, vectors_ready=ready, model_error=model_error)
        log.debug("mode %s runs as %s%s", mode, plan.mode, f" ({plan.note})" if plan.note else "")
        return plan

    def searcher(
        self, model: Embedder | None = None, model_error: str | None = None, *, lazy_model: bool = False
    ) -> Searcher:
        """The one way to search this store (workspace.searcher).  model: a loaded query model
        (the app's and the MCP server's, once loaded; None meanwhile, with model_error when
        it failed); lazy_model: the configured model, loaded only if a query's vector is not
        remembered (the command line)."""
        from kenning.workspace.searcher import Searcher

        if lazy_model:
            model, model_error = self.load_query_embedder()
        return Searcher(self, model, model_error)

    def load_query_embedder(self) -> tuple[RememberingEmbedder | None, str | None]:
        """The query embedder, or None and why it cannot be had (search stays on keywords).

        The model itself is loaded on first use, and only for a query whose vector the
        store does not remember (search.remembered): a search repeated in a new process
        costs no model load.  When it then fails to load, the search raises
        ModelUnavailable; model_problem() words it for the keyword search's note.
        """
        from kenning.search.remembered import RememberingEmbedder

        try:
            return RememberingEmbedder(self.query_embedder, self.store), None
        except Exception as exc:  # the bundled model's packages missing, an unknown catalog model
            return None, self.model_problem(exc)

    def model_problem(self, exc: Exception) -> str:
        """Why the model could not be loaded, in the user's words (and logged)."""
        from kenning.workspace.messages import report

        return report(exc, self.store_path, doing=f"loading the model {self.model_name}")

    # -- sources -------------------------------------------------------------------

    def overview(self) -> sources.SourceOverview:
        return sources.overview(self.store)

    def tag_counts(self) -> dict[str, int]:
        """Each tag (front matter, inline #tags) and how many documents carry it."""
        return self.store.stats.tag_counts()

    def list_sources(self) -> list[Source]:
        return self.overview().sources

    def source(self, ref: str | int | Source) -> Source:
        return sources.resolve(self.store, ref)

    def add_folder(self, path: str | os.PathLike[str], **kw: Any) -> Source:
        return sources.add_folder(self.store, path, **kw)

    def link_repo(self, path: str | os.PathLike[str], **kw: Any) -> Source:
        return sources.link_repo(self.store, path, **kw)

    def source_overlap(self, path: str | os.PathLike[str], **kw: Any) -> sources.SourceOverlap | None:
        """The source whose files a new source at path would index again (the app offers a way out)."""
        return sources.source_overlap(self.store, path, **kw)

    def remove_source(self, ref: str | int | Source) -> Source:
        return sources.remove(self.store, ref)

    def set_enabled(self, ref: str | int | Source, enabled: bool) -> Source:
        return sources.set_enabled(self.store, ref, enabled)

    def set_globs(self, ref: str | int | Source, include: sources.Globs, exclude: sources.Globs) -> Source:
        return sources.set_globs(self.store, ref, include, exclude)

    def last_indexed_at(self) -> float | None:
        """When an index run last finished over any source (cheap: no counts)."""
        times = [s.last_indexed_at for s in self.store.sources.list() if s.last_indexed_at is not None]
        return max(times, default=None)

    def skipped_files(self, ref: str | int | Source | None = None) -> list[tuple[str, SkippedFile]]:
        source_id = None if ref is None else self.source(ref).id
        return self.store.documents.skipped(source_id)

    def status(self) -> StoreStatus:
        return StoreStatus(
            path=Path(self.location) if self.is_team else Path(self.store_path),  # never a password
            size_bytes=self.store.stats.size_bytes(),
            model=self.model_name,
            overview=self.overview(),
            pending_vectors=self.store.vectors.count_pending(),
            skipped=self.store.documents.skipped(),
            embedding_rate=self.store.queue.rate(),
        )

    # -- links between notes -------------------------------------------------------

    def link_graph(self) -> LinkGraph:
        """Every note's links, resolved (kept until the store changes: workspace.links)."""
        from kenning.workspace.links import LinkGraph

        graph = self.__dict__.get("_link_graph")
        if graph is None or graph.version != self.store.version():
            graph = self.__dict__["_link_graph"] = LinkGraph(self.store)
        return graph

    def resolve_document(self, path: str, source: str | None = None) -> ResolvedDocument:
        """One indexed document by a hit's abs_path or a source-relative path (workspace.documents)."""
        from kenning.workspace.documents import resolve_document

        return resolve_document(self.store, path, source)

    def document_lines(self, found: ResolvedDocument) -> tuple[list[str], str | None]:
        """Its lines as the file holds them now (or as indexed), and a note when they differ."""
        from kenning.workspace.documents import document_lines

        return document_lines(self.store, found, self.settings.size_cap)

    def extracted_text(self, source: str, rel_path: str) -> str | None:
        """The indexed text of a document not read as text (PDF, mail...); None for a text file."""
        from kenning.search.documents import extracted_text

        return extracted_text(self.store, source, rel_path)

    def note_links(self, path: str, source: str | None = None, *, mentions: bool = True) -> NoteLinks:
        """Outgoing links, backlinks and unlinked mentions of one indexed document (a hit's
        abs_path, or its path with its source when several sources hold that path)."""
        from kenning.workspace.documents import resolve_document

        found = resolve_document(self.store, path, source)
        return self.link_graph().note(found.document.id, mentions=mentions)

    def unresolved_links(self, source: str | None = None) -> list[Link]:
        """Links naming no indexed file, or several (ambiguous), in every source or one."""
        name = self.source(source).name if source else None  # an unknown name is an error, not an empty list
        return self.link_graph().unresolved(name)

    # -- indexing ------------------------------------------------------------------

    def index(
        self,
        refs: list[str | int | Source] | None = None,
        *,
        embed: bool = True,
        embedder_factory: Callable[[], Embedder] | None = None,
        on_progress: ProgressCallback | None = None,
        cancel: CancelToken | None = None,
        lock_wait_seconds: float = 0.0,
        size_cap: int | None = None,
    ) -> IndexRun:
        """Index the given sources (None: all), with the size cap and model of the settings."""
        from kenning.core.progress import no_progress
        from kenning.ingest.indexer import Indexer

        chosen = None if refs is None else self._chosen(refs)
        factory = (embedder_factory or (lambda: self.embedder)) if embed else None
        cap = size_cap or self.settings.size_cap
        indexer = Indexer(self.store, factory, size_cap=cap, lock_wait_seconds=lock_wait_seconds)
        log.info("indexing %s (size cap %d MB)", "all sources" if refs is None else refs, cap // (1024 * 1024))
        run = indexer.run(chosen, embed=embed, on_progress=on_progress or no_progress, cancel=cancel)
        for report in run.reports:
            log.info(
                "%s: %d added, %d changed, %d removed, %d errors%s",
                report.source,
                report.added,
                report.changed,
                report.removed,
                len(report.errors),
                " (cancelled)" if report.cancelled else "",
            )
        return run

    def watcher(
        self,
        *,
        embed: bool = True,
        embedder_factory: Callable[[], Embedder] | None = None,
        on_update: Callable[[WatchUpdate], None] | None = None,
        on_notice: Callable[[str], None] | None = None,
    ) -> Watcher:
        """Watches every enabled source and indexes what changes (see ingest.watch)."""
        from kenning.ingest.watch import Watcher

        return Watcher(
            self.store,
            (embedder_factory or (lambda: self.embedder)) if embed else None,
            size_cap=self.settings.size_cap,
            on_update=on_update or (lambda _: None),
            on_notice=on_notice or (lambda _: None),
        )

    def _chosen(self, refs: list[str | int | Source]) -> list[Source]:
        """Names must exist (the user typed them); ids removed meanwhile are skipped (a queued run)."""
        current = {s.id: s for s in self.list_sources()}
        chosen = []
        for ref in refs:
            if isinstance(ref, str):
                chosen.append(self.source(ref))
            elif (ref.id if isinstance(ref, Source) else ref) in current:
                chosen.append(current[ref.id if isinstance(ref, Source) else ref])
        return chosen

    # -- front-end state (window layout, last mode) ---------------------------------

    def load_state(self, key: str, default: Any = None) -> Any:
        return self.store.settings.get_json(key, default)

    def save_state(self, key: str, value: Any) -> None:
        self.store.settings.set_json(key, value)
