"""Plain data passed between layers."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import field

from kenning import TYPE_CHECKING
from kenning.core.records import Record
from kenning.core.wording import plural

if TYPE_CHECKING:
    from typing import Literal

    SearchMode = Literal["hybrid", "lexical", "vector"]
    Fusion = Literal["rrf", "linear"]
    # Which ranking made a hit: the fusion; "-fuzzy" when unknown words were corrected
    # first; "filter" for a query of filters only (newest first).
    # "-corrected" when words the index does not know were searched as their confident
    # corrections beside words it knows (search.suggest).
    Layer = Literal["rrf", "linear", "rrf-fuzzy", "linear-fuzzy", "rrf-corrected", "linear-corrected", "filter"]
    # Three different things are called "kind":
    SourceKind = Literal["folder", "git"]  # what a source is
    ChunkKind = Literal["prose", "code"]  # how a chunk reads (proximity weights, chunking)

# The aliases are for type checkers only (typing stays unimported: kenning.TYPE_CHECKING);
# these tuples hold the same values at run time (tests/test_types.py compares them).
SEARCH_MODES: tuple[SearchMode, ...] = ("hybrid", "lexical", "vector")
FUSIONS: tuple[Fusion, ...] = ("rrf", "linear")
FUZZY_LAYERS: tuple[Layer, ...] = ("rrf-fuzzy", "linear-fuzzy")
CORRECTED_LAYERS: tuple[Layer, ...] = ("rrf-corrected", "linear-corrected")

# The third "kind" (beside SourceKind and ChunkKind):
# A document's file type: "markdown", "text" or "code:<lang>" (an open set: one per
# language; ingest.filetypes.is_code / code_lang read it).
DocumentKind = str


class Source(Record, frozen=True):
    """A folder or git repository the user added, as the store keeps it."""

    id: int
    kind: SourceKind
    root: str
    name: str
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    enabled: bool = True
    added_at: float = 0.0
    last_indexed_at: float | None = None


class ChunkDraft(Record, frozen=True):
    """A chunk as the chunker produces it, before it has an id."""

    ord: int
    title: str
    kind: ChunkKind
    text: str
    line_start: int
    line_end: int
    location: str = ""  # where in an extracted document: "p. 12", "cell 3"; "" for files read as text


class NoteLink(Record, frozen=True):
    """A link a note makes (`[[target]]`, `![[embed]]`, `[text](path.md)`), as written.

    Resolved to a document only when asked (kenning.workspace.links): the note it names
    may be added, renamed or given an alias after the linking note was indexed."""

    target: str  # the path or name, without its #heading, ^block or |alias
    line: int  # 1-based, in the file
    embed: bool = False  # ![[…]]: the target is shown inside the note


class Document(Record, frozen=True):
    """A document as the indexer writes it (the store assigns its id)."""

    source_id: int
    rel_path: str
    sha256: str  # of the file's raw bytes
    size: int
    mtime: float
    created_at: float | None
    updated_at: float | None
    kind: DocumentKind
    title: str
    tags: tuple[str, ...]
    ext: str
    is_test: bool
    # Front-matter title, aliases and tags, indexed as title words of every chunk of the document.
    title_words: str = ""
    aliases: tuple[str, ...] = ()  # other names of a note (front matter `aliases`): link targets
    meta: str = ""  # JSON: what an extractor recorded (sender, date, kernel language, pages)
    chunking_version: int = 1  # of the chunker that cut its chunks (ingest.chunking)


class SkippedFile(Record, frozen=True):
    """A file the indexer did not index, and why."""

    rel_path: str
    reason: str  # "binary" | "too-large" | "undecodable" | "unreadable" | "outside-root" | "vanished" | ...
    detail: str = ""


class IndexReport(Record):
    """What one indexing run of a source did, counted."""

    source: str
    files_seen: int = 0
    added: int = 0
    changed: int = 0
    unchanged: int = 0
    removed: int = 0
    chunks_written: int = 0
    skipped: list[SkippedFile] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    cancelled: bool = False
    seconds_text: float = 0.0

    def record_written(self, chunks: int, *, was_known: bool) -> None:
        """One document written: a changed one if the index knew it, else an added one."""
        self.chunks_written += chunks
        if was_known:
            self.changed += 1
        else:
            self.added += 1


class EmbedReport(Record):
    """What phase 2 (embeddings, for every source at once) did in one index run."""

    pending_at_start: int = 0  # chunks lacking a current vector when it started
    embedded: int = 0  # chunks the model embedded
    reused: int = 0  # chunks whose vector came from the embedding cache
    tokens: int = 0  # word pieces the model read
    seconds: float = 0.0
    openings: int = 0  # documents' openings the model embedded (ingest.embedtext.opening_input)


class ListScore(Record, frozen=True):
    """One retriever's say about one hit: the record the fusion used."""

    rank: int
    score: float  # the retriever's raw score (bm25 is negated so larger is better; cosine similarity)
    weight: float
    contribution: float
    by_rank_of: int = 0  # linear fusion read this list by rank (scores at FTS5's floor): the rank used


MEANING_LIST = "vector"
# The list of hits that read like the other strong hits (search.neighbours): evidence
# drawn from the other lists, never a match of its own.
NEIGHBOURS_LIST = "neighbours"
MEANING_ONLY_LABEL = "meaning only"  # how every front end labels such a hit
# How every front end labels a hit without the quoted phrases (ranked after those holding
# them, or, in a question written out, ranked as words).  Short: the app draws it under
# a row's score.
LACKS_PHRASES_LABEL = "lacks the phrase"
# More words than this besides the quoted ones: the query is prose and its quotes are
# quotation, ranked as words and not required (search.phrases says why).
PROSE_WORDS = 20


# The lists that find a chunk by the query's own words (the feedback list searches for
# words the query does not have).
QUERY_WORD_LISTS = ("porter", "trigram")


def matches_no_query_word(lists: Iterable[str]) -> bool:
    """Found by meaning or by feedback words only: no word of the query matched it."""
    return not set(QUERY_WORD_LISTS).intersection(lists)


def meaning_only(lists: Iterable[str]) -> bool:
    """Found by the meaning (vector) list alone: no word of the query, and no related
    word the feedback list searched for, matched it literally (its neighbours' share,
    drawn from the lists that found it, is no finding of its own)."""
    names = [name for name in lists if name != NEIGHBOURS_LIST]
    return bool(names) and all(name == MEANING_LIST for name in names)


class Breakdown(Record):
    """The ranking function's own record of how a hit's final score was made.

    final == min(1, (base + recency_bonus + git_bonus) * penalty),
    relevance == min(1, (fused + proximity) / normaliser),
    base == signals.calibrated_base(relevance, spread) and
    shown == signals.shown_score(final, spread), exactly as computed.
    """

    lists: dict[str, ListScore] = field(default_factory=dict)
    fused: float = 0.0  # sum of the lists' contributions (RRF or linear)
    proximity: float = 0.0  # bounded rerank contribution added to fused
    normaliser: float = 1.0  # what fused + proximity was divided by to give relevance
    relevance: float = 0.0  # the evidence in [0, 1]; 1 = first in every list, full proximity
    spread: float | None = None  # base = exp((relevance - 1) / spread) / headroom; None: relevance / headroom
    base: float = 0.0
    cosine: float | None = None
    recency: float = 0.0
    recency_bonus: float = 0.0
    git: float = 0.0
    git_bonus: float = 0.0
    git_paths: tuple[str, ...] = ()
    ambiguous_links: tuple[str, ...] = ()  # wiki links by a name several paths share: counted for none
    penalty: float = 1.0
    final: float = 0.0  # what the hits are ordered by
    shown: float = 0.0  # the score people read: final on relevance's scale (signals.shown_score)
    layer: Layer = "rrf"
    corrections: dict[str, str] = field(default_factory=dict)
    fusion: Fusion = "rrf"
    proximity_parts: dict[str, float] = field(default_factory=dict)
    expansion: tuple[str, ...] = ()  # the words the feedback list searched for
    moved_toward: int = 0  # vector list: chunks its query vector was moved toward (meaning feedback)
    # vector list: the sentences its query vector read the question in besides whole
    # (search.sentences); 0: the question whole.  The cosine is to that reading.
    sentences: int = 0
    # vector list: the cosine of the query to the chunk's document's opening, and its weight:
    # the list's score is (1 - opening_weight) × the chunk's cosine + opening_weight × this
    # (search.vector.mixed_scores); None: the document has no opening vector (the score is the cosine).
    opening: float | None = None
    opening_weight: float = 0.0
    # Does not hold the query's quoted phrases, which were not required of every hit
    # (see PhraseFallback): ranked after every hit holding them, which fewer chunks hold
    # than the results asked for; or, when `quotation`, ranked by its evidence.
    lacks_phrases: bool = False
    # The query is prose (more than PROSE_WORDS words besides its quotes): its quotes were read as quotation,
    # ranked as words and not required; lacks_phrases says whether this hit holds them.
    quotation: bool = False

    @property
    def meaning_only(self) -> bool:
        return meaning_only(self.lists)


class Hit(Record):
    """One search result: a chunk, where it is, and why it ranks where it does."""

    chunk_id: int
    source: str
    path: str  # relative to the source root
    abs_path: str
    title: str
    kind: ChunkKind
    line_start: int
    line_end: int
    snippet: str  # plain text, exactly as in the chunk (whitespace runs collapsed)
    score: float  # the score shown (Breakdown.shown); hits are ordered by Breakdown.final
    breakdown: Breakdown
    text: str = ""
    # (start, end) character offsets into `snippet` of each matched word, sorted and
    # disjoint: markup never travels inside the text (notes contain [[wiki links]]).
    spans: tuple[tuple[int, int], ...] = ()
    location: str = ""  # "p. 12", "cell 3" in an extracted document; "" for text files
    root: str = ""  # the source's folder: a file is read only inside it (ingest.reading.read_source_file)
    store_label: str = ""  # which store it came from when several are searched together ("" : the one store)

    @property
    def meaning_only(self) -> bool:
        """Found by meaning alone and no word of the query in its snippet: what every front
        end labels MEANING_ONLY_LABEL (in Semantic mode every hit comes from the meaning
        list, and one whose snippet shows the query's words is not "meaning only")."""
        return self.breakdown.meaning_only and not self.spans


class MatchTerms(Record, frozen=True):
    """What the search matched on, so any front end can highlight the same words.

    `words` match whole tokens by stem (the corrected words in the fuzzy layer, the
    words of phrases); `substrings` match anywhere, case-insensitively (the partial
    words and identifiers the trigram list found).
    """

    words: tuple[str, ...] = ()
    substrings: tuple[str, ...] = ()


class MatchTotal(Record, frozen=True):
    """How much a search found beyond the `limit` hits it returns.

    Keyword modes: every chunk the filter allows that contains a searched word (or a
    searched substring), with the other chunks the search ranked (found by meaning over
    the similarity floor, or by the feedback words).  Meaning-only (vector) mode: the
    chunks retrieved by meaning whose cosine reaches `floor`; there is no word to count."""

    chunks: int
    files: int
    capped: bool = False  # counting stopped at `chunks`: there are more
    floor: float | None = None  # set in meaning-only mode: the cosine the counted chunks reach

    def describe(self) -> str:
        """ "143 matches in 37 files" (every front end says it this way)."""
        what = plural(self.chunks, "match", more=self.capped)
        if self.floor is not None:
            what += f" by meaning (cosine ≥ {self.floor:.2f})"
        return f"{what} in {plural(self.files, 'file', more=self.capped)}"


class PhraseFallback(Record, frozen=True):
    """What a search did with quoted phrases it could not require of every hit.

    A quoted phrase is required: every hit contains it.  When no chunk the filters allow
    contains it, it is searched as its words (`absent`, or every phrase when each occurs
    but never all in one chunk: `together`).  When fewer chunks contain the phrases than
    the results asked for, those come first (`first` of them) and the results for the
    words follow, marked (Breakdown.lacks_phrases), so the list is never cut short and its
    first N are the first N of any longer list.  In a question written out (more than
    PROSE_WORDS words besides its quotes) quotes are quotation: nothing is
    required, each hit says whether it holds the phrases (`quotation`)."""

    absent: tuple[str, ...] = ()  # phrases, as quoted, that no allowed chunk contains
    # A question of more than `prose_words` words besides its quotes: these phrases were
    # read as quotation (ranked as words, not required; each hit says whether it holds them).
    quotation: tuple[str, ...] = ()
    prose_words: int = 0
    together: bool = False  # the phrases occur, but never all in one chunk
    required: tuple[str, ...] = ()  # phrases still required of the first hits
    first: int | None = None  # hits holding the required phrases, ranked first; None: every hit holds them
    filtered: bool = False  # the query had filters: "no note the filters allow"

    @property
    def relaxed(self) -> bool:
        return bool(self.absent) or self.first is not None or bool(self.quotation)

    def describe(self) -> str | None:
        """What every front end says above the hits ("No note contains "…"; showing results for its words")."""
        if self.quotation:
            return (
                f"Quotes in a question of more than {self.prose_words} words are read as quotation, not required: "
                f"results {'without' if len(self.quotation) == 1 else 'lacking one of'} "
                f"{_quoted(self.quotation, ', ')} are marked"
            )
        parts = []
        notes = "No note the filters allow" if self.filtered else "No note"
        if self.absent:
            quoted = _quoted(self.absent, " and " if self.together else " or ")
            together = " together" if self.together else ""
            their = "its" if len(self.absent) == 1 else "their"
            parts.append(f"{notes} contains {quoted}{together}; showing results for {their} words")
        if self.first is not None and self.required:
            verb = "contains" if self.first == 1 else "contain"
            their = "its" if len(self.required) == 1 and not self.absent else "the"
            parts.append(
                f"only {plural(self.first, 'result')} {verb} {_quoted(self.required, ' and ')}; "
                f"results for {their} words follow"
            )
        if not parts:
            return None
        text = "; ".join(parts)
        return text[0].upper() + text[1:]


def _quoted(phrases: tuple[str, ...], joiner: str) -> str:
    return joiner.join(f'"{p}"' for p in phrases)


class SearchResult(Record):
    """A query's hits with what the engine did to the query (corrections, notes)."""

    query: str
    hits: list[Hit]
    layer: Layer = "rrf"
    corrections: dict[str, str] = field(default_factory=dict)
    suggestion: str | None = None  # "did you mean" query, results unchanged
    notes: list[str] = field(default_factory=list)  # e.g. "vector search unavailable: ..."
    mode: SearchMode = "hybrid"  # the mode the search ran in (keywords when meaning was not to be had)
    expansion: tuple[str, ...] = ()  # the words the feedback list searched for (hybrid)
    matched: MatchTerms = field(default_factory=MatchTerms)  # what highlighting marks
    timings_ms: dict[str, float] = field(default_factory=dict)
    total: MatchTotal | None = None  # when SearchOptions.count_total asked for it, or counter() was called
    # Counts the total on demand: the app shows the hits at once and the total a moment
    # later (counting a common word's matches costs 10-30 ms at 20k chunks).
    counter: Callable[[], MatchTotal] | None = field(default=None, repr=False, compare=False)
    phrases: PhraseFallback = field(default_factory=PhraseFallback)  # quoted phrases searched as words

    def banner(self) -> str | None:
        """What every front end says above the hits when the words searched were not the ones typed."""
        said = [text for text in (self.phrases.describe(), self._words_banner()) if text]
        return "\n".join(said) or None

    def _words_banner(self) -> str | None:
        fixed = ", ".join(f"{a} → {b}" for a, b in self.corrections.items())
        if self.layer in FUZZY_LAYERS and not self.hits:
            return f"No exact matches, and none for the corrected words either: {fixed}"
        if self.layer in FUZZY_LAYERS:
            return f"No exact matches: showing results for the corrected words {fixed}"
        if self.layer in CORRECTED_LAYERS:
            return f"Words the index does not know were searched as the words they most likely mean: {fixed}"
        return None
