"""The one way a front end searches: plan → engine → options → search → notes.

The CLI, the app, the MCP server (and `kenning serve`) each hold a Searcher over their
Workspace and call `search()`; none of them holds a Store or builds an engine.  What
a search may ask is decided here once, for all of them:

- the mode it runs in (searching.plan_search: keywords, with a note saying why, when
  the model or its vectors are missing or the query has no words);
- its options (searching.search_options: the settings, with one call's mode, limit
  and fusion on top; a front end's own maximum bounds the limit);
- the engines, kept across calls (their vocabulary, term counts and vector scan are
  worth keeping): one for keywords and one with the model, sharing what they know of
  the store's words;
- the query vectors: every front end's model is wrapped in the store's memory of them
  (search.remembered), the only query-vector cache, so a query searched in the app or
  through the MCP server is remembered for the command line, and the other way round.

A Searcher uses its Workspace's one connection: one caller at a time (the app calls it
from its search thread, the MCP server under its lock).
"""

from __future__ import annotations

import threading
import time

from kenning import TYPE_CHECKING
from kenning.core.errors import KenningError
from kenning.search.fusion import RELATED_LIMIT, RELATED_TO_DOCUMENT_LIMIT
from kenning.workspace.searching import search_options

if TYPE_CHECKING:
    from kenning.core.types import Fusion, SearchResult
    from kenning.embedding import Embedder
    from kenning.search.engine import SearchEngine
    from kenning.search.related import RelatedNote
    from kenning.search.remembered import RememberingEmbedder
    from kenning.storage.api import ChunkRow
    from kenning.workspace.settings import Settings
    from kenning.workspace.workspace import Workspace

# New query vectors are written to the store at most this often by a long-lived front
# end (and when it closes): a write changes the store's version, which the engines'
# caches are keyed on, so saving after every query would make live typing start them
# afresh each time.  The command line saves once, after printing.
SAVE_QUERY_VECTORS_EVERY_SECONDS = 30.0
# A front end with an event loop (the app) also saves once its searches pause this long:
# the query the user just searched is remembered before they can switch to a terminal
# and run it again with `kenning search`, which then loads no model.
SAVE_QUERY_VECTORS_AFTER_PAUSE_SECONDS = 1.5
# That save waits only briefly for another writer (storage.query_vectors.WRITE_WAIT_MS):
# when it finds the store busy (an indexer, the watcher, or the app's search history,
# saved after the same pause) it is tried again after another pause, this many times,
# before the vectors wait for the next search or the app's close.
SAVE_QUERY_VECTORS_RETRIES_AFTER_PAUSE = 5


class Searcher:
    """Searches one Workspace's store with the model it is given (see the module's docstring)."""

    def __init__(self, workspace: Workspace, model: Embedder | None = None, model_error: str | None = None) -> None:
        self.workspace = workspace
        self._engines: dict[bool, SearchEngine] = {}
        self._engines_over: object = None  # the store they search
        self._embedder: RememberingEmbedder | None = None
        self.model_error: str | None = None
        self._saved_at = time.monotonic()
        self.set_model(model, model_error)

    # -- the model ------------------------------------------------------------------

    def set_model(self, model: Embedder | None, error: str | None = None) -> None:
        """The query model now available (None: still loading, or failed: error says why)."""
        from kenning.search.remembered import RememberingEmbedder

        kept = self._embedder
        if kept is not None and kept.model is model and kept.store is self.workspace.store:
            model = kept  # handed the same model again (a host's every request): same engine, same memory
        if model is not None and not isinstance(model, RememberingEmbedder):
            model = RememberingEmbedder(model, self.workspace.store)
        if model is not self._embedder:
            self._engines.pop(True, None)
        self._embedder = model
        self.model_error = error

    @property
    def embedder(self) -> RememberingEmbedder | None:
        return self._embedder

    @property
    def model_load_seconds(self) -> float | None:
        """How long this process took to load the model for a search (None: it did not)."""
        return self._embedder.load_seconds if self._embedder is not None else None

    # -- searching ------------------------------------------------------------------

    def search(
        self,
        text: str,
        mode: str = "hybrid",
        *,
        limit: int | None = None,
        max_limit: int | None = None,
        fusion: Fusion | None = None,
        count_total: bool = False,
        by_file: bool = False,
        settings: Settings | None = None,
    ) -> SearchResult:
        """One query, in the best mode the store and model allow, its notes saying why not
        the one asked for.  limit: None for the limit setting; max_limit: the front end's
        own bound; by_file: the limit counts files, not chunks (a list grouped by file, the
        app's); settings: the caller's (the app's take effect before the store has them)."""
        from kenning.search.query import parse_query
        from kenning.search.remembered import ModelUnavailable

        if parse_query(text).is_empty:  # filters only: documents by date, no model needed
            mode = "lexical"
        try:
            return self._search(text, mode, limit, max_limit, fusion, count_total, by_file, settings)
        except ModelUnavailable as exc:  # the query needed the model and it would not load
            self.set_model(None, self.workspace.model_problem(exc.cause))
            return self._search(text, mode, limit, max_limit, fusion, count_total, by_file, settings)

    def _search(
        self,
        text: str,
        mode: str,
        limit: int | None,
        max_limit: int | None,
        fusion: Fusion | None,
        count_total: bool,
        by_file: bool,
        settings: Settings | None,
    ) -> SearchResult:
        chosen = settings or self.workspace.settings
        plan = self.workspace.plan(mode, self._embedder, self.model_error)
        wanted = chosen.limit if limit is None else limit
        if max_limit is not None:
            wanted = min(wanted, max_limit)
        options = search_options(
            chosen, plan.mode, limit=wanted, fusion=fusion, count_total=count_total, files=wanted if by_file else None
        )
        result = self.engine(plan.semantic).search(text, options)
        if plan.note:
            result.notes.append(plan.note)
        return result

    def engine(self, semantic: bool) -> SearchEngine:
        """The engine a plan runs on, kept across calls (the keyword one always exists)."""
        from kenning.search.engine import SearchEngine

        store = self.workspace.search_store  # with the stores given to Workspace.also(), as one
        if self._engines_over is not store:  # also() changed what is searched
            self._engines.clear()
            self._engines_over = store
        if False not in self._engines:
            self._engines[False] = SearchEngine(store, None)
        if not semantic or self._embedder is None:
            return self._engines[False]
        if True not in self._engines:
            # Both take turns on one thread: they share what they know of the words.
            words = self._engines[False].words
            self._engines[True] = SearchEngine(store, self._embedder, words=words)
        return self._engines[True]

    def prepare(self, text: str, mode: str = "hybrid") -> None:
        """Start loading the model now, on a thread of its own, when this query will need it:
        it then loads while the search's modules are imported and its words counted,
        instead of from the moment the engine asks for the query's vector (the command
        line, whose process loads the model for each new query).  The search waits for it.

        Only for a meaning search whose words the index all holds (a word it lacks may
        be corrected, and the corrected query's vector may be remembered) and whose vector
        the store does not remember: whenever it starts, the search would load the model."""
        from kenning.search.query import parse_query

        embedder = self._embedder
        query = parse_query(text)
        if embedder is None or query.is_empty or not self.workspace.plan(mode, embedder, self.model_error).semantic:
            return
        store = self.workspace.search_store
        tokens = [token for term in query.content_terms for token in store.analyzer.tokens(term)]
        if not tokens or any(counts.chunks == 0 for counts in store.terms.counts_of(tokens).values()):
            return
        if embedder.remembers(query.embedding_text(search_options(self.workspace.settings, "hybrid").query_text)):
            return
        # Not a daemon: a process never ends while onnxruntime is still building the session.
        threading.Thread(target=_load_quietly, args=(embedder,), name="kenning-model-load").start()

    def warm(self) -> None:
        """Read now what the first meaning search would read (0.6 s of vectors at a million chunks)."""
        engine = self.engine(True)
        if engine.vectors is not None:
            engine.vectors.load()

    def forget_caches(self) -> None:
        """Start the engines afresh (after indexing through this Workspace)."""
        self._engines.clear()

    # -- what else a front end asks of the vectors ------------------------------------

    def related_notes(self, chunk_id: int, limit: int = RELATED_LIMIT) -> list[RelatedNote] | None:
        """The files a link joins to one hit's file, then the nearest in meaning to its chunk
        (search.related); None without the model."""
        from kenning.ingest.filetypes import is_test_path
        from kenning.search.related import related_notes

        vectors = self.engine(True).vectors
        if vectors is None:
            return None
        store = self.workspace.search_store
        own = store.chunks.rows([chunk_id]).get(chunk_id)
        if own is None:
            return []
        tests = is_test_path(own.rel_path)
        # The link graph is the personal store's: a team store's hit has no links here.
        personal = own.store_label in ("", self.workspace.store_label)
        linked = self._links_of(own) if personal else {}
        return related_notes(store, vectors, chunk_id, limit, tests=tests, linked=linked)

    def _links_of(self, own: ChunkRow) -> dict[tuple[str, str], str]:
        """(source, path) -> how a link joins that file to own's (workspace.links)."""
        from kenning.search.related import LINKED_BOTH_WAYS, LINKED_FROM_HERE, LINKS_HERE

        try:
            found = self.workspace.note_links(own.rel_path, own.source, mentions=False)
        except KenningError:  # not a note the link graph knows (removed meanwhile)
            return {}
        how: dict[tuple[str, str], str] = {}
        for link in found.backlinks:
            how[(link.origin.source, link.origin.path)] = LINKS_HERE
        for link in found.outgoing:
            if link.to is not None:
                key = (link.to.source, link.to.path)
                how[key] = LINKED_BOTH_WAYS if how.get(key) == LINKS_HERE else LINKED_FROM_HERE
        return how

    def related_to_document(self, document_id: int, limit: int = RELATED_TO_DOCUMENT_LIMIT) -> list[RelatedNote] | None:
        """Files nearest in meaning to a whole document; None without the model or its vectors."""
        from kenning.search.related import related_to_document

        vectors = self.engine(True).vectors
        return None if vectors is None else related_to_document(vectors, document_id, limit)

    # -- the query-vector memory ----------------------------------------------------

    def save_query_vectors(self, *, now: bool = False) -> bool:
        """Write the query vectors embedded since the last save (best effort: False when the
        store was busy or read-only).  now=False: only when the last save is
        SAVE_QUERY_VECTORS_EVERY_SECONDS old (a long-lived front end after each search)."""
        if self._embedder is None:
            return True
        if not now and time.monotonic() - self._saved_at < SAVE_QUERY_VECTORS_EVERY_SECONDS:
            return True
        saved = self._embedder.save()
        if saved:
            self._saved_at = time.monotonic()
        return saved


def _load_quietly(embedder: RememberingEmbedder) -> None:
    from kenning.search.remembered import ModelUnavailable

    try:
        embedder.load()
    except ModelUnavailable:
        pass  # the search's own load raises it again, where it is handled
