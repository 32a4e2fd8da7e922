"""The storage interface: what every backend implements, and all that search, ingest
and workspace may know of a store.

One object, a `Store`, is handed to the layers above storage; they reach the data only
through its members, grouped by concern (``store.sources``, ``store.documents``,
``store.keywords``...).  Nothing here names a table, an SQL dialect, FTS5 or apsw: the
SQLite backend (kenning.storage.sqlite) keeps FTS5, its vector scan and its files
behind it, and a PostgreSQL backend (tsvector + GIN for words, pgvector for vectors)
implements the same members.  tests/contract/ runs one suite against every backend;
docs/architecture.md §8 lists these members, and a test keeps that list true.

Rules every backend keeps (the contract suite checks them):

- Ids.  Source, document and chunk ids are integers, unique in the store and never
  reused while the row exists; a chunk's id is its identity everywhere (fusion, the
  breakdown, the app's selection).  New text is a new chunk: a chunk row is never
  rewritten, only deleted (with its vector, references and index entries).
- Filters.  Every method taking a `ChunkFilter` applies it *inside* its own query,
  before any cut: a chunk the filter excludes never takes a place.  Chunks of disabled
  sources are never returned by a filtered method.
- Scores.  Ranked lists are best first, larger is better, ties broken by chunk id
  ascending; scores are comparable within one list only.
- Words.  `store.analyzer` is the word index's own tokenizer and stemmer: the terms
  `vocabulary()` holds and `ranked(...)` matches are exactly what it makes of a text,
  so highlighting, proximity, typo correction and retrieval agree.  Words reach a
  backend as plain words (`KeywordQuery`), never as query syntax: nothing typed by a
  user is ever parsed as an operator.
- Change token.  `version()` changes whenever any connection (this process or
  another) commits a change; caches above storage are keyed on it.  It may change
  without a visible change (a write of the query-vector cache), never the reverse.
- Transactions.  `atomic()` nests (inner levels are savepoints); the outermost level
  takes the write lock at once.  A writer waits `wait_ms` at most, then raises the
  backend's busy error (workspace.messages words it).
- Vectors are float32 numpy arrays of the store's dimension, unit length as the model
  gives them; a backend may store them in another form (SQLite: float16) but gives
  back float32.  A fingerprint ("model id|dim|version") names the model that made a
  vector; only the fingerprint last `prepare`d is current.
- Errors.  A failure of the user's data or machine raises `core.errors.StoreError`
  (or a subclass) or the backend's own database error; `kenning.storage.failure_kind`
  classifies the latter for workspace.messages, which words every message.

numpy is imported by no module at import time: `kenning status` and a lexical search
never load it (tests/test_command_imports.py).
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager

from kenning import TYPE_CHECKING
from kenning.core.filters import ChunkFilter
from kenning.core.fsnames import abs_path_in
from kenning.core.records import Record
from kenning.core.types import ChunkDraft, Document, NoteLink, SkippedFile, Source

if TYPE_CHECKING:
    from array import array
    from typing import Any, Literal, Protocol, TypeVar

    import numpy as np

    from kenning.core.types import ChunkKind, SourceKind

    # The keyword indexes a backend keeps, by the list each feeds: "porter" holds stemmed
    # words (the analyzer's terms), "trigram" finds substrings (identifiers, partial words)
    # whether or not they are whole words.  The names are the lists' names in every breakdown.
    LexicalIndex = Literal["porter", "trigram"]
    # What a backend's database error means for the user (kenning.storage.failure_kind):
    # busy (another writer kept the store too long), damaged (the file or schema is not what
    # Kenning wrote), full (no disk space), io (the disk or network failed), permission
    # (may not read or write), not_set_up (the store lacks its schema or an upgrade, and this
    # role may not make it), unusable (any other database error).
    FailureKind = Literal["busy", "damaged", "full", "io", "permission", "newer", "not_set_up", "unusable"]
else:
    # The concerns below are contracts for the type checker (which checks each backend
    # against them structurally); at run time they are plain classes, nothing asks
    # isinstance of them, and this module imports no typing (kenning.TYPE_CHECKING).
    Protocol = object

LEXICAL_INDEXES: tuple[LexicalIndex, ...] = ("porter", "trigram")
# A reference path stored as "**/Deploy.md" (Documents.replace's refs) means the one path
# that is "Deploy.md" or ends in "/Deploy.md": how Obsidian reads a bare [[Deploy]] (a
# unique name anywhere in the vault); GitState.ending_with looks such names up.
ANYWHERE = "**/"


# -- what crosses the seam ---------------------------------------------------------


class Ranked(Record, frozen=True):
    """One place of a ranked list: larger score is better."""

    chunk_id: int
    score: float


class KeywordQuery(Record, frozen=True):
    """Words for a keyword index, never syntax.

    terms: words, any of which finds a chunk; a word given twice weighs twice in the
    score (query-term frequency).  phrases: word sequences, each found as adjacent
    words (an alternative like a term).  also_scoring: words that find no chunk but add
    their score to the chunks the others find, as if the query had been
    ``terms OR also_scoring`` over those chunks only (the common words a large index
    leaves out of the finding, search.fts)."""

    terms: tuple[str, ...] = ()
    phrases: tuple[tuple[str, ...], ...] = ()
    also_scoring: tuple[str, ...] = ()

    @property
    def is_empty(self) -> bool:
        return not self.terms and not self.phrases


class KeywordList(Record, frozen=True):
    """A keyword index's ranked list and how its scores may be read.

    by_rank_only: the scores carry no information beyond their order (SQLite: every
    bm25 of the list is at FTS5's idf floor, as for words found in most chunks of a
    tiny index); fusion then reads the list by rank (search.fusion)."""

    ranked: list[Ranked]
    by_rank_only: bool = False


class MatchCount(Record, frozen=True):
    """How many chunks and files a keyword query matches."""

    chunks: int
    files: int
    capped: bool  # counting stopped at the cap: there are more


class TermCounts(Record, frozen=True):
    """How often one indexed term occurs."""

    chunks: int  # chunks holding the term
    occurrences: int


class KnownDocument(Record, frozen=True):
    """What the indexer needs to decide whether a file changed."""

    rel_path: str
    id: int
    sha256: str
    size: int
    mtime: float
    chunking_version: int  # of the chunker that cut its chunks


class IndexedDocument(Record, frozen=True):
    """A document as the store holds it."""

    id: int
    source_id: int
    rel_path: str
    title: str
    kind: str
    tags: tuple[str, ...]


class IndexedChunk(Record, frozen=True):
    """A chunk of an indexed document, with its text."""

    id: int
    ord: int
    line_start: int
    line_end: int
    text: str


class ChunkRow(Record, frozen=True):
    """A chunk with what ranking and display need of its document and source."""

    chunk_id: int
    title: str
    kind: ChunkKind
    text: str
    line_start: int
    line_end: int
    rel_path: str
    root: str  # the source's root folder: a path (see Sources.add)
    source: str
    source_id: int
    source_kind: SourceKind
    created_at: float | None
    updated_at: float | None
    location: str = ""  # "p. 12", "cell 3" in an extracted document
    store_label: str = ""  # the store's label when several are searched together (storage.combined)

    @property
    def abs_path(self) -> str:
        return abs_path_in(self.root, self.rel_path)


class DatedChunk(Record, frozen=True):
    """A chunk with its document's date (filter-only queries list newest first)."""

    chunk_id: int
    first_ord: int
    date: float | None  # the document's: updated, else created, else mtime


class PendingChunk(Record, frozen=True):
    """A chunk lacking a current vector: what the model reads for it, and its cache key."""

    chunk_id: int
    title: str
    text: str
    document_kind: str
    rel_path: str
    input_sha: str
    source_id: int = 0  # for the embedding queue's runs
    doc_words: str = ""  # the document's front-matter names (embedtext.embedding_input's names)


class PendingOpening(Record, frozen=True):
    """A document whose opening (ingest.embedtext.opening_input) has no current vector: its
    first chunks, in order, as the model would read them (title, text), and how many it has."""

    document_id: int
    document_kind: str
    rel_path: str
    chunk_count: int
    parts: tuple[tuple[str, str], ...]  # (title, text) of its first chunks, by ord
    doc_words: str = ""


class SourceStats(Record, frozen=True):
    """What the store holds for one source, counted."""

    source_id: int
    documents: int
    chunks: int
    pending_vectors: int
    skipped: int


class Candidates(Record, frozen=True):
    """Chunks whose exact cosine a search computes: ids and their float32 vectors."""

    ids: np.ndarray  # int64
    matrix: np.ndarray  # (len(ids), dim) float32

    @staticmethod
    def empty() -> Candidates:
        import numpy as np

        return Candidates(np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32))

    def rows_of(self, chunk_ids: Iterable[int]) -> list[int]:
        """The matrix rows of those of the given chunks it holds, in their order."""
        row = {c: i for i, c in enumerate(self.ids.tolist())}  # Python ints: numpy scalars cost 10x
        return [row[c] for c in chunk_ids if c in row]

    def vectors_of(self, chunk_ids: Iterable[int]) -> list[np.ndarray]:
        return [self.matrix[r] for r in self.rows_of(chunk_ids)]


class NoteRow(Record, frozen=True):
    """A document as the link graph reads it."""

    id: int
    source_id: int
    source: str
    root: str
    rel_path: str
    title: str
    kind: str


class LinkRow(Record, frozen=True):
    """A link a note makes, as stored."""

    document_id: int
    chunk_id: int
    target: str
    line: int
    embed: int


class ChunkText(Record, frozen=True):
    """A chunk's text, its document and its first line."""

    chunk_id: int
    document_id: int
    line_start: int
    text: str


# -- the concerns --------------------------------------------------------------------


class Sources(Protocol):
    """The folders and repositories the user pointed Kenning at."""

    def list(self) -> list[Source]:
        """Every source, by name."""

    def get(self, name: str) -> Source:
        """The source of that name; core.errors.SourceError naming the known ones when none."""

    def add(
        self, *, kind: SourceKind, root: str, name: str, include: tuple[str, ...] = (), exclude: tuple[str, ...] = ()
    ) -> Source:
        """A new, enabled source; SourceError when the root or the name is taken.

        root is a file-system path as os.fsdecode gives it (a byte that is not UTF-8 is a
        surrogate escape): a store keeps it as text, core.fsnames.storable_name(root), and
        every root it returns (Source, ChunkRow, NoteRow) is the exact path again."""

    def remove(self, source_id: int) -> None:
        """The source and everything derived from it: documents, chunks, vectors, skipped files, git paths."""

    def set_enabled(self, source_id: int, enabled: bool) -> None: ...

    def set_globs(self, source_id: int, include: tuple[str, ...], exclude: tuple[str, ...]) -> None: ...

    def mark_indexed(self, source_id: int, when: float) -> None: ...


class Documents(Protocol):
    """Documents, their chunks and references, and the files that were skipped."""

    def known(self, source_id: int) -> dict[str, KnownDocument]:
        """rel_path -> what is indexed of it, for one source."""

    def replace(
        self,
        record: Document,
        chunks: list[ChunkDraft],
        refs: Mapping[int, set[str]],
        embed_shas: Mapping[int, str],
        links: Mapping[int, Sequence[NoteLink]] | None = None,
    ) -> int:
        """Write a document and its chunks (replacing its old chunks) in one transaction;
        returns its id.  refs: chunk ord -> repository paths its text mentions;
        embed_shas: chunk ord -> sha256 of what the model reads for it (the vector cache
        key); links: chunk ord -> the links it makes, as written (Links reads them back).
        The document's aliases (record.aliases) are kept for the link graph."""

    def touch(self, document_id: int, mtime: float) -> None:
        """Content unchanged, file touched: remember the new mtime."""

    def delete(self, document_ids: Sequence[int]) -> None:
        """Documents with their chunks, vectors, references and index entries."""

    def delete_parts_after(self, source_id: int, container: str, count: int) -> int:
        """Remove the parts of a container numbered above count ("x.mbox#4" when a mailbox
        shrank to 3 messages); returns how many.  Never "x.mbox#2/note.md" nor "x.mbox#2#1"."""

    def replace_skipped(self, source_id: int, skipped: Sequence[SkippedFile]) -> None: ...

    def update_skipped(self, source_id: int, checked: Collection[str], skipped: Sequence[SkippedFile]) -> None:
        """The watcher's share of the list: the entries of the paths it just checked are
        replaced by what it skipped of them (a full run rewrites the list: replace_skipped)."""

    def skipped(self, source_id: int | None = None) -> list[tuple[str, SkippedFile]]:
        """(source name, file) of one source or all, by source name then path."""

    def kind(self, source_name: str, rel_path: str) -> str | None: ...

    def text(self, source_name: str, rel_path: str) -> str:
        """A document's text as indexed, rebuilt from its chunks at their lines."""

    def find(self, source_id: int, rel_path: str) -> IndexedDocument | None: ...

    def at(self, rel_path: str) -> list[IndexedDocument]:
        """Every document with that relative path, whatever its source, by source id."""

    def chunks(self, document_id: int) -> list[IndexedChunk]:
        """A document's chunks in order."""


class Links(Protocol):
    """The links notes make, as written, for the link graph (workspace.links resolves them)."""

    def notes(self) -> list[NoteRow]:
        """Every document of an enabled source, by id (links may name any file)."""

    def aliases(self) -> list[tuple[int, str]]:
        """(document id, alias) of every document of an enabled source, by document then alias."""

    def links(self) -> list[LinkRow]:
        """Every link of every note of an enabled source, in reading order."""

    def chunk_texts(self, chunk_ids: Sequence[int]) -> dict[int, ChunkText]: ...

    def chunks_saying(self, words: str, source_id: int, limit: int) -> list[ChunkText]:
        """Chunks of one source the word index finds `words` in side by side (candidates:
        the caller checks the exact wording), in document order."""


class Chunks(Protocol):
    """Chunks as ranking and display read them."""

    def rows(self, chunk_ids: Sequence[int]) -> dict[int, ChunkRow]:
        """Those of the given chunks that still exist, by id."""

    def mentioned_paths(self, chunk_ids: Sequence[int]) -> dict[int, list[str]]:
        """Per chunk: the repository paths its text mentions (chunks mentioning none are absent)."""

    def count(self) -> int:
        """Every chunk of the store (the keyword statistics' collection size)."""

    def newest_documents(self, chunk_filter: ChunkFilter, limit: int) -> list[DatedChunk]:
        """The first allowed chunk of each of the newest documents holding allowed chunks, newest first."""


class Keywords(Protocol):
    """The keyword indexes: ranked candidates, with the statistics fusion needs."""

    def ranked(
        self,
        index: LexicalIndex,
        query: KeywordQuery,
        chunk_filter: ChunkFilter,
        limit: int,
        *,
        weights: tuple[float, float],
        selective: bool = False,
    ) -> KeywordList:
        """The best `limit` chunks the filter allows that the query finds, best first.

        The score is the backend's relevance of the words (SQLite: bm25, FTS5's
        constants) with `weights` for the (title, text) columns; a word the query
        repeats counts as often.  The cut is exact: the filter acts before it.
        selective: the caller expects the filter to rule out most chunks (a hint for
        the query plan; the answer is the same)."""

    def count_total(
        self, queries: Mapping[LexicalIndex, KeywordQuery], also: Sequence[int], chunk_filter: ChunkFilter, cap: int
    ) -> MatchCount:
        """Chunks and files (documents) the filter allows among every chunk an index finds
        its query in, plus the `also` chunks, counted to `cap` (capped says there are more).
        also_scoring words find nothing here either."""


class Terms(Protocol):
    """The word index's vocabulary and term statistics (typo correction, feedback, common words)."""

    def vocabulary(self) -> dict[str, int]:
        """Every term of the word index (analyzer terms) -> the chunks holding it."""

    def counts(self, term: str) -> TermCounts:
        """How often one term (an analyzer term, as the index stores it) occurs."""

    def counts_of(self, terms: Sequence[str]) -> dict[str, TermCounts]:
        """counts() of each term, in one ask (a team store: one round trip)."""

    def chunks_with(self, words: str) -> int:
        """Chunks the word index finds `words` in: one word's term (its counts().chunks), or
        several as a phrase."""

    def count_together(
        self, all_of: Sequence[str], any_of: Sequence[str], cap: int, chunk_filter: ChunkFilter | None = None
    ) -> int:
        """Chunks (counted to cap) holding every word of all_of and, when any_of is given,
        at least one of its words; among those the filter allows when one is given."""

    def count_each(self, words: Sequence[str], cap: int, chunk_filter: ChunkFilter | None = None) -> dict[str, int]:
        """count_together([word], [], cap, chunk_filter) of each word, in one ask (a team store: one round trip)."""

    def texts_with(self, word: str, limit: int, chunk_filter: ChunkFilter | None = None) -> list[str]:
        """The texts of up to `limit` chunks holding word (that the filter allows)."""


class Analyzer(Protocol):
    """The word index's own tokenizer and stemmer, bound to the backend instance."""

    def tokenize(self, text: str) -> tuple[str, ...]:
        """The terms the word index stores for text, in order."""

    def tokens(self, word: str) -> tuple[str, ...]:
        """tokenize() for one query word (cached: words repeat)."""

    def stems(self, words: Iterable[str]) -> Mapping[str, tuple[str, ...]]:
        """tokenize() of each word, many at once; the mapping is read-only to callers and
        may hold other words too."""

    def known(self) -> Mapping[str, tuple[str, ...]]:
        """What stems() has answered so far (read-only; bounded, so it may forget)."""


class Vectors(Protocol):
    """Chunk vectors: the embedding cache, the current vectors and nearest-vector search."""

    # nearest() runs on a connection of its own, beside the keyword statements: a search
    # starts it as soon as its query vector is known (a team store's server walks its
    # index while another server process scores the words).  False: on the caller's
    # thread after the keyword lists (SQLite: overlapping measured slower on 2 cores).
    concurrent: bool

    def prepare(self, fingerprint: str, dim: int) -> None:
        """Make the store's vectors those of this model: a new fingerprint makes every chunk pending."""

    def count_pending(self) -> int: ...

    def cached(self, fingerprint: str, shas: Sequence[str]) -> dict[str, bytes]:
        """sha -> float32 vector (bytes) of the given input texts the cache holds."""

    def write(self, fingerprint: str, items: Sequence[tuple[int, str, bytes]]) -> None:
        """Store (chunk id, input sha, float32 vector bytes) in one transaction, caching
        each by (fingerprint, sha); a chunk deleted meanwhile is skipped."""

    def collect_unused(self) -> int:
        """Drop cached vectors whose input no chunk has any more; returns how many."""

    def has_vectors(self, fingerprint: str) -> bool:
        """Whether any chunk has a current vector of this fingerprint (asked before every search)."""

    def count(self, fingerprint: str) -> int: ...

    def vectors_of(self, fingerprint: str, chunk_ids: Sequence[int]) -> dict[int, np.ndarray]:
        """The current float32 vectors of the given chunks that have one."""

    def pending_openings(self, fingerprint: str, after_id: int, limit: int, parts: int) -> list[PendingOpening]:
        """Documents by id from after_id on whose opening is unknown (never looked at since
        the document was written) or has no vector of this fingerprint in the cache, with
        their first `parts` chunks; a document known to have none is not pending."""

    def write_openings(self, fingerprint: str, items: Sequence[tuple[int, str, bytes | None]]) -> None:
        """Store (document id, opening's input sha or "" for none, float32 vector bytes or
        None for none or already cached) in one transaction, caching each vector by
        (fingerprint, sha); a document deleted meanwhile is skipped.  The
        opening is forgotten whenever its document's chunks are replaced, and goes with it."""

    def openings_of(self, fingerprint: str, chunk_ids: Sequence[int]) -> dict[int, np.ndarray]:
        """chunk id -> the current float32 vector of its document's opening, for those of the
        given chunks whose document has one."""

    def nearest(
        self, fingerprint: str, query: np.ndarray, chunk_filter: ChunkFilter, k: int, also: Collection[int] = ()
    ) -> Candidates:
        """Candidates for the k allowed chunks nearest the query by cosine, with their
        float32 vectors: at least the k nearest the backend's index finds (an approximate
        index may miss a few; more may be given, for exact rescoring above storage), plus
        those of `also` that have a vector.  Only chunks the filter allows, `also`
        excepted (the caller filtered them).  Writes committed by any connection are
        seen within `STALE_SECONDS`."""

    def warm(self, fingerprint: str, chunk_filter: ChunkFilter | None = None) -> None:
        """Read now what nearest() would read on its first call (the app does it ahead; a
        search while its query vector is being made), with what it reads for this filter."""


class QueryVectors(Protocol):
    """Query vectors remembered across processes (a cache: never fails a search)."""

    def recall(self, fingerprint: str, text: str, dim: int) -> tuple[np.ndarray, float] | None:
        """(the vector, when last used) for text under fingerprint; None when unknown or unreadable."""

    def remember(
        self, fingerprint: str, new: Mapping[str, np.ndarray], used: Iterable[str], *, now: float, cap: int
    ) -> bool:
        """Store new vectors and mark used ones, keeping the cap most recently used;
        False when the store could not be written (busy, read-only, full)."""

    def count(self) -> int: ...


class EmbeddingQueue(Protocol):
    """Which pending chunk the model embeds next, and how fast it goes here."""

    def order(self) -> array[int]:
        """Ids of every chunk lacking a current vector, most valuable first: notes before
        code, small sources before large ones, recently changed files first."""

    def pending_in_order(self, chunk_ids: Sequence[int]) -> list[PendingChunk]:
        """Those of the ids still pending, in their order."""

    def record_rate(self, chunks_per_second: float, now: float | None = None) -> None:
        """Remember the model's measured speed (smoothed)."""

    def rate(self) -> float | None:
        """Chunks per second last measured, None before any."""


class Settings(Protocol):
    """Key/value settings kept in the store (one row per key)."""

    def get(self, key: str) -> str | None: ...

    def set(self, key: str, value: str) -> None: ...

    def get_json(self, key: str, default: Any = None) -> Any:
        """The JSON value of key; default when missing or not JSON."""

    def set_json(self, key: str, value: Any) -> None: ...


class GitState(Protocol):
    """Per git source: every current path and its last commit time (the git signal's data)."""

    def replace(self, source_id: int, last_commit: Mapping[str, float | None]) -> None: ...

    def path_times(self, paths: Sequence[str]) -> dict[str, float | None]:
        """Last commit of each given path present in any linked repository (the most recent)."""

    def source_path_times(self, source_id: int, paths: Sequence[str]) -> dict[str, float | None]: ...

    def ending_with(self, tails: Sequence[str]) -> dict[str, dict[str, float | None]]:
        """tail -> {path: last commit} for paths equal to tail or ending in "/tail" (any case)."""


class Stats(Protocol):
    """Counts for `kenning status` and the sources panel."""

    def per_source(self) -> dict[int, SourceStats]: ...

    def size_bytes(self) -> int:
        """What the store takes on disk (0 when the backend cannot tell)."""

    def tag_counts(self) -> dict[str, int]:
        """Every tag with the number of documents carrying it."""


if TYPE_CHECKING:
    # Only for the checker: at run time a string bound is compiled (typing.ForwardRef), and
    # a process's first compile() builds the compiler's AST types, ~3% of a lexical search.
    _Self = TypeVar("_Self", bound="Store")


class Store(Protocol):
    """One open store (one connection): the object search, ingest and workspace are handed."""

    # The members, one per concern (read-only: a backend may make them as it likes).
    @property
    def sources(self) -> Sources: ...

    @property
    def documents(self) -> Documents: ...

    @property
    def links(self) -> Links: ...

    @property
    def chunks(self) -> Chunks: ...

    @property
    def keywords(self) -> Keywords: ...

    @property
    def terms(self) -> Terms: ...

    @property
    def analyzer(self) -> Analyzer: ...

    @property
    def vectors(self) -> Vectors: ...

    @property
    def query_vectors(self) -> QueryVectors: ...

    @property
    def queue(self) -> EmbeddingQueue: ...

    @property
    def settings(self) -> Settings: ...

    @property
    def git(self) -> GitState: ...

    @property
    def stats(self) -> Stats: ...

    @property
    def location(self) -> str:
        """Where the store is, for messages and logs (a path; a URL without its password)."""

    def atomic(self, *, wait_ms: int | None = None) -> AbstractContextManager[None]:
        """A transaction; nested uses are savepoints.  wait_ms: how long to wait for another
        writer (None: the backend's busy timeout)."""

    def version(self) -> Hashable:
        """The change token (see the module's docstring)."""

    def indexing_lock(
        self, wait_seconds: float = 0.0, *, sources: Sequence[int] | None = None
    ) -> AbstractContextManager[None]:
        """Held by an indexer while it writes; core.errors.StoreLockedError after
        wait_seconds.  It dies with its process.  sources: the ids of the sources the
        indexer writes (their text, and the vectors of their chunks); None: the whole store.
        Two holders never share a source; a backend may lock more than asked (the SQLite
        store locks its file whatever sources say, a team store locks each source)."""

    def watching_lock(self) -> AbstractContextManager[None]:
        """Held (shared) while a watcher indexes changes into the store, so that nothing
        replaces the store under it (`kenning rebuild` moves a store file aside)."""

    def close(self) -> None: ...

    def __enter__(self: _Self) -> _Self: ...

    def __exit__(self, *exc: object) -> None: ...


# How long nearest() may lag behind another connection's vector writes (see Vectors).
STALE_SECONDS = 5.0

__all__ = [
    "ANYWHERE",
    "LEXICAL_INDEXES",
    "STALE_SECONDS",
    "Analyzer",
    "Candidates",
    "ChunkRow",
    "Chunks",
    "DatedChunk",
    "Documents",
    "EmbeddingQueue",
    "FailureKind",
    "GitState",
    "IndexedChunk",
    "IndexedDocument",
    "KeywordList",
    "KeywordQuery",
    "Keywords",
    "KnownDocument",
    "LexicalIndex",
    "LinkRow",
    "Links",
    "ChunkText",
    "NoteRow",
    "MatchCount",
    "PendingChunk",
    "PendingOpening",
    "QueryVectors",
    "Ranked",
    "Settings",
    "SourceStats",
    "Sources",
    "Stats",
    "Store",
    "TermCounts",
    "Terms",
    "Vectors",
]
