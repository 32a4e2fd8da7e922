"""The search pipeline of docs/architecture.md §5, one named step at a time.

parse → retrieve (porter, trigram, vector; filters inside each) → fuse → rerank the
whole pool (proximity, then signals) → cut → snippets.  If the filtered fusion is
empty, unknown words are corrected against the vocabulary and the search runs once
more (layer "rrf-fuzzy", or "linear-fuzzy" under linear fusion).  Every hit's
Breakdown is filled by the steps that make the score, never recomputed afterwards.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import field, replace
from functools import partial
from types import MappingProxyType

from kenning import TYPE_CHECKING
from kenning.core.filters import ChunkFilter
from kenning.core.records import Record
from kenning.core.types import (
    QUERY_WORD_LISTS,
    Breakdown,
    Hit,
    MatchTerms,
    MatchTotal,
    PhraseFallback,
    SearchResult,
    matches_no_query_word,
    meaning_only,
)
from kenning.search import browse, definitions, feedback, fts, totals
from kenning.search import fusion as rank_fusion
from kenning.search.filters import build_condition, is_selective, searchable_scope
from kenning.search.fuzzy import Vocabulary
from kenning.search.highlight import Highlighter, match_terms
from kenning.search.hits import load_reference_times
from kenning.search.proximity import NO_PROXIMITY, Proximity, proximity
from kenning.search.query import ParsedQuery, compound_words, parse_query
from kenning.search.signals import (
    BASE_SPREAD,
    best_final,
    calibrated_base,
    final_score,
    git_activity,
    penalty,
    recency,
    shown_score,
)
from kenning.search.snippet import make_snippet
from kenning.search.textmatch import StemMatcher, holds_run, query_stems
from kenning.storage.api import Candidates, ChunkRow, KeywordList, KeywordQuery, Store

if TYPE_CHECKING:  # numpy and the vector index load only for semantic modes (instant lexical commands)
    from concurrent.futures import Future, ThreadPoolExecutor

    import numpy as np

    from kenning.core.types import Fusion, Layer, SearchMode
    from kenning.embedding import Embedder
    from kenning.search.suggest import Suggestion
    from kenning.search.vector import VectorIndex
    from kenning.storage.api import LexicalIndex

# How many candidates each list returns for any number of hits up to STABLE_LIMIT, so
# the first N hits of a search are the first N of any longer one up to that (issue #28
# item 5): the lists, their fusion and the feedback drawn from them do not change with
# the number asked for.  It was max(30, 3 × limit), so `-n 5` missed candidates that
# `-n 20` ranked above its fifth.  60 is what the default 20 hits always had; beyond
# STABLE_LIMIT the lists are 3 × limit deep as before, so the quality benchmarks' 100
# hits keep their 300 (a depth of 100 there cost NPL 0.037 Recall@100).  The keyword
# lists cost in proportion to their depth: 60 keeps a search of 10 hits (30 deep before)
# within bench_search's noise at 100k chunks.
CANDIDATE_DEPTH = 60
STABLE_LIMIT = 50
# The rerank scores the pool best-first, first the candidates that can reach the hits
# without a penalty, then in batches of this many, until no candidate left can reach
# them however its signals turn out.
RERANK_BATCH = 32
PROXIMITY_SHARE = 0.5  # proximity is worth at most half of one list's first place
# A hit no word of the query matched literally (see Breakdown.meaning_only) is kept
# only when its cosine reaches this floor, so `qwxzv` does not list 20 arbitrary
# chunks.  Calibrated for the default model on Cranfield and NPL
# (tests/benchmarks/bench_meaning_floor.py; the figures are in the README).
MEANING_FLOOR = 0.30
# A hit that no query word matched but the feedback words found (words the best first
# hits use) is kept only when its cosine to the query as typed reaches this floor
# (issue #28 item 6): `wibblequark`, a word of one note, brought 19 notes that share
# only "notes" or "sprint" with it (cosines 0.02-0.15 with the default model).  Related
# words are evidence a meaning-only hit lacks, so their floor is lower: at MEANING_FLOOR
# MED lost 0.005 Recall@100; at 0.20 nDCG@10 is unchanged on all five collections and
# only Cranfield's hybrid Recall@100 moves (0.8138 -> 0.8112).  At 0.15 the example
# keeps a junk note (cosine 0.1503).
RELATED_WORDS_FLOOR = 0.20
# The vector list may score a chunk whose document has an opening vector (a prose document
# cut in several chunks: ingest.embedtext.opening_input) (1 - w) × its cosine + w × the
# cosine of its document's opening (search.vector.mixed_scores); the meaning floor and the
# hit's cosine stay the chunk's own.  w per mode, 0 (the chunk alone) where none is named.
# Vector mode: 0.5, chosen by leaving one collection out over 0-0.75 and openings of 1,000
# or 2,000 characters (docs/architecture.md §6, issue #28 round eleven): every fold's
# choice gains or ties on the collection left out (Cranfield +0.0070, CISI +0.0041, MED
# +0.0020 nDCG@10).  Hybrid: 0, since there the fusion already has a document's title and
# opening words, and the mix lost CISI's Recall@100 (0.5340 -> 0.5258 at 0.5) and gained
# nowhere (round nine).
OPENING_WEIGHTS: Mapping[SearchMode, float] = MappingProxyType({"vector": 0.5})
# Proximity, when switched on, reorders the fused pool of keyword and meaning evidence.
# It is off by default: under linear fusion it cost nDCG@10 on Cranfield and NPL alike
# (under RRF it had helped, because ranks alone had lost how close the scores were).
# On bm25 alone (lexical mode) it cost nDCG on one collection, and meaning-only search
# (vector mode) ranks by meaning, not by where words stand.
PROXIMITY_MODES = ("hybrid",)
# Where a confident correction of an unknown word is searched without asking.  Keyword
# mode searches what was typed (the correction is offered as "did you mean", and the
# fuzzy layer still runs when nothing matches): on the clean queries of Cranfield and
# NPL, where an unknown word is a real word the index lacks ("optimising" where the
# documents say "optimum"), searching the guess cost the keyword list 0.002 and 0.005
# nDCG@10; in hybrid search the meaning list weighs it (±0.001), and on typo'd queries it
# recovers most of what the typo cost (tests/benchmarks/bench_typos.py).
CORRECTED_MODES = ("hybrid", "vector")
# Where a compound word reaches bm25 as its words (search.query.compound_words), as the
# plain baseline reads it.  As one phrase, "fuzzy-set-theoretic" found only the chunks
# that write it so: CISI's keyword list fell under plain bm25 on Recall@100, and split it
# rises 0.4254 -> 0.4339 (Cranfield 0.7276 -> 0.7370).  In hybrid search the phrase's
# precision ("three-dimensional" is not "two-dimensional") is worth more than the recall
# the meaning list brings anyway: split there, hybrid lost 0.0018 nDCG@10 on Cranfield
# and 0.001 on CISI (issue #28 round six).
COMPOUND_WORDS_MODES = ("lexical",)
# A keyword search of at most COMPOUND_NAME_WORDS words (compounds counted once, common
# words not) that holds a compound names a thing: `pytest-qt`, `docker-compose`.  Searched
# as its words, a compound found a note that says "pytest" often and "qt" once, far apart,
# above the note that writes `pytest-qt`.  So a chunk that writes the compound's words
# side by side, in order ("pytest-qt", "pytest qt", "pytest_qt"), gets COMPOUND_SHARE of
# one list's first place (as much as proximity at its most), times the share of the
# query's compounds it so writes: the words still find every chunk they did, the chunks
# naming the thing come first.  In a longer question a compound is prose, and where its
# words stand is no evidence: on Cranfield's questions of 7-14 words the bonus cost
# nDCG@10 (0.3683 -> 0.3596 with it at every length), at 5-6 words it lifted nDCG@10
# (+0.0009) but cost Recall@100 (-0.0009), at 4 or fewer it changes nothing on the five
# collections (none of their compound queries is that short; issue #28 round seven).
COMPOUND_SHARE = PROXIMITY_SHARE
COMPOUND_NAME_WORDS = 4


class SearchOptions(Record, frozen=True):
    """How to search: mode, fusion, depth and the per-stage switches."""

    limit: int = rank_fusion.DEFAULT_LIMIT
    mode: SearchMode = "hybrid"
    fusion: Fusion = rank_fusion.DEFAULT_FUSION
    weights: dict[str, float] = field(default_factory=lambda: dict(rank_fusion.DEFAULT_WEIGHTS))
    # Per-stage switches: the quality benchmark's ablation turns each off in turn.
    trigram: bool = True  # the substring list (identifiers, words the index does not know)
    feedback: bool = True  # the pseudo-relevance feedback list (hybrid only)
    meaning_feedback: bool = False  # the vector list searched again with the query moved toward its best results
    neighbours: bool = True  # the first hits' scores regularised by their neighbours' (search.neighbours; hybrid)
    proximity: bool = False  # the bounded proximity rerank contribution (see PROXIMITY_MODES)
    compound_adjacency: bool = True  # a compound searched as its words ranks where they stand together (COMPOUND_SHARE)
    title_weight: float = fts.TITLE_WEIGHT  # bm25 weight of the title column (text is 1)
    signals: bool = True  # recency, git activity and the proposal penalty
    normalise: bool = True  # fused evidence divided by its best possible value (relevance in [0, 1])
    base_spread: float | None = BASE_SPREAD  # see signals.calibrated_base; None: base linear in relevance
    term_frequency: bool = True  # a word the query repeats counts as often in bm25
    meaning_floor: float | None = MEANING_FLOOR  # None: keep every meaning-only hit
    search_corrections: bool = True  # confident corrections of unknown words are searched for
    stopwords: bool = True  # the porter list searches common words too (bm25's idf weighs them)
    count_total: bool = False  # SearchResult.total: every match counted (search/totals.py), not just the hits
    # A list grouped by file (the app's): the hits of the best `files` files (as many as
    # the candidate depth holds) instead of the best `limit` chunks, which a few long files
    # matching in every section can fill alone. Candidates as deep as for 2 × files chunks.
    files: int | None = None
    # Quoted phrases are required while chunks hold them (search.phrases); False: searched
    # as words only (the benchmark's ablation).
    phrases: bool = True
    # What the model embeds for the query (ParsedQuery.embedding_text): "typed", the
    # question as written (docs/architecture.md §6: chosen by leaving one collection out);
    # "words", its words with their repeats; "words32", its first 32 distinct words.
    query_text: str = "typed"
    # A question of several sentences read whole and sentence by sentence (search.sentences):
    # None in the modes search.sentences.MODES names; True or False in any (the benchmark's knob).
    sentences: bool | None = None
    # The document's opening in the vector list's score (0: the chunk alone); None: the
    # mode's OPENING_WEIGHTS.  Read it as opening_mix.
    opening_weight: float | None = None

    @property
    def depth(self) -> int:
        """Each list's depth: CANDIDATE_DEPTH for any limit up to STABLE_LIMIT, so a
        shorter list is a prefix of a longer one; a grouped list (files) as deep as for
        2 × files chunks."""
        by_limit = CANDIDATE_DEPTH if self.limit <= STABLE_LIMIT else max(CANDIDATE_DEPTH, 3 * self.limit)
        return max(by_limit, 6 * (self.files or 0))

    @property
    def opening_mix(self) -> float:
        """The weight of the document's opening in this search's vector list."""
        return OPENING_WEIGHTS.get(self.mode, 0.0) if self.opening_weight is None else self.opening_weight


class _Retrieved(Record):
    """What the retrieval stage found, for the ranking stages."""

    lists: dict[str, list[fts.Ranked]]
    weights: dict[str, float]  # this query's list weights
    query_vec: np.ndarray | None
    notes: list[str]
    porter_terms: tuple[str, ...] = ()  # the words the porter list searched for
    expansion: tuple[str, ...] = ()  # the words the feedback list searched for
    matches: dict[LexicalIndex, KeywordQuery] = field(default_factory=dict)  # index -> what it searched (for totals)
    by_rank: set[str] = field(default_factory=set)  # lists whose scores say nothing beyond their order
    counter: Callable[[], MatchTotal] | None = None  # counts this search's total (search/totals.py)
    moved_toward: int = 0  # chunks the query vector was moved toward (search.meaning_feedback)
    sentences: int = 0  # the sentences the query vector read the question in besides whole (search.sentences)
    vector_candidates: Candidates | None = None  # what the vector list rescored, with their vectors
    openings: dict[int, np.ndarray] = field(default_factory=dict)  # candidate -> its document's opening vector
    opening_parts: dict[int, tuple[float, float]] = field(default_factory=dict)  # vector list: (cosine, opening's)
    rows: dict[int, ChunkRow] = field(default_factory=dict)  # chunks read so far (the rerank reads no chunk twice)


class _RankContext(Record, frozen=True):
    """What every hit of one ranking shares."""

    prox_scale: float
    normaliser: float
    now: float
    layer: Layer
    corrections: dict[str, str]
    fusion: Fusion
    expansion: tuple[str, ...]
    moved_toward: int = 0
    sentences: int = 0
    signals: bool = True
    spread: float | None = BASE_SPREAD
    floor: float | None = None  # the meaning floor a hit no query word matched must reach
    opening_weight: float = 0.0  # SearchOptions.opening_mix (the explain record's)
    compound_scale: float = 0.0  # what a chunk writing every compound's words together adds
    compounds: tuple[tuple[str, ...], ...] = ()  # the index terms of each compound searched as words


_Scored = tuple[Breakdown, rank_fusion.Candidate, ChunkRow]


def _base_at_most(cand: rank_fusion.Candidate, context: _RankContext) -> float:
    """The most base a candidate can have (its proximity at the most)."""
    most = cand.fused + context.prox_scale + context.compound_scale
    return calibrated_base(min(1.0, most / context.normaliser), context.spread)


def _first_batch(order: list[rank_fusion.Candidate], limit: int, context: _RankContext) -> int:
    """How many of the best-first pool to score at once: those that could reach the
    limit-th without a penalty on it (the common case, so one batch usually decides)."""
    if len(order) <= limit:
        return len(order)
    reach = _base_at_most(order[limit - 1], context) * (1.0 - 1e-9)
    size = limit
    while size < len(order) and best_final(_base_at_most(order[size], context)) >= reach:
        size += 1
    return size


def _compounds_written(matcher: StemMatcher, row: ChunkRow, compounds: tuple[tuple[str, ...], ...]) -> float:
    """The share of the compounds whose words the chunk writes side by side, in order."""
    held = sum(holds_run(matcher, row.title, list(c)) or holds_run(matcher, row.text, list(c)) for c in compounds)
    return held / len(compounds)


def _best_files(scored: list[_Scored], files: int, cap: int) -> list[_Scored]:
    """The scored hits (best first) of the best `files` files, `cap` hits at most."""
    kept: list[_Scored] = []
    chosen: set[tuple[str, str]] = set()
    for item in scored:
        row = item[2]
        key = (row.source, row.rel_path)
        if key not in chosen and len(chosen) >= files:
            continue
        chosen.add(key)
        kept.append(item)
        if len(kept) >= cap:
            break
    return kept


class Stopwatch:
    """Adds the milliseconds spent in named steps to a dict (SearchResult.timings_ms)."""

    def __init__(self, into: dict[str, float]) -> None:
        self.into = into

    @contextmanager
    def __call__(self, step: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.into[step] = self.into.get(step, 0.0) + (time.perf_counter() - started) * 1000


def _vector_index(store: Store, fingerprint: str) -> VectorIndex:
    from kenning.search.vector import VectorIndex

    return VectorIndex(store, fingerprint)


class WordCaches:
    """What an engine keeps about the store's words: the typo vocabulary (tens of MB at a
    million chunks), chunk counts per term and the feedback words' statistics.  Engines
    over one store that take turns on one thread (the app's keyword and hybrid engines)
    share one, so nothing is read and held twice."""

    def __init__(self, store: Store) -> None:
        # One change token for both: a search reads it once (fts.ChangeToken).
        self.token = fts.ChangeToken(store)
        self.vocabulary = Vocabulary(store, self.token)
        self.term_stats = fts.TermStats(store, self.token, held=self.vocabulary.held_chunks)
        self.index_counts = feedback.IndexCounts(store, held=self.vocabulary.held_chunks)


class SearchEngine:
    def __init__(
        self,
        store: Store,
        embedder: Embedder | None = None,
        *,
        clock: Callable[[], float] = time.time,
        words: WordCaches | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.clock = clock
        self.vectors = _vector_index(store, embedder.fingerprint) if embedder else None
        self.words = words or WordCaches(store)
        self.vocabulary = self.words.vocabulary
        self.term_stats = self.words.term_stats
        self.index_counts = self.words.index_counts
        # Query vectors are remembered by the embedder a front end hands over (the store's
        # memory of them, search.remembered): the engine keeps no second copy.
        self._embed_pool: ThreadPoolExecutor | None = None  # made by the first semantic search

    def search(self, text: str, options: SearchOptions | None = None) -> SearchResult:
        with self.words.token.pinned():  # the store's change token read once, not per word
            return self._search(text, options or SearchOptions())

    def _search(self, text: str, options: SearchOptions) -> SearchResult:
        started = time.perf_counter()
        query = parse_query(text)
        result = SearchResult(
            query=query.text, hits=[], notes=[*query.problems, *self._unknown_sources(query)], mode=options.mode
        )
        if query.is_empty:
            if query.filters_only:
                result.hits, result.layer = self._newest_matching(query, options), browse.LAYER
            return result
        clock = Stopwatch(result.timings_ms)
        with clock("words"):
            self.term_stats.prefetch((*query.content_terms, *query.ranking_terms))
            suggestion = self._suggestion(query)
        searched, corrections = query, {}
        layer: Layer = options.fusion
        if options.search_corrections and options.mode in CORRECTED_MODES and suggestion and suggestion.to_search:
            # The typed word is unknown to the index and its correction occurs with the
            # query's other words: search for what was meant, and say so.
            corrections = suggestion.to_search
            searched = _apply_corrections(query, corrections)
            # No typed word matched at all: that is the fuzzy layer, found without a first pass.
            nothing_known = len(suggestion.unknown) == len(query.content_terms)
            layer = _fuzzy_layer(options.fusion) if nothing_known else _corrected_layer(options.fusion)
        hits, retrieved, result.phrases = self._run_phrased(
            searched, self._floored(searched, options), layer, corrections, clock
        )
        result.matched = self._match_terms(searched)
        result.notes.extend(retrieved.notes)
        result.counter = retrieved.counter
        result.expansion = retrieved.expansion
        result.layer, result.corrections = layer, dict(corrections)
        if layer == options.fusion and suggestion and suggestion.corrections:
            if not hits and options.mode != "vector":
                corrected = _apply_corrections(query, suggestion.corrections)
                layer = _fuzzy_layer(options.fusion)
                hits, retrieved, result.phrases = self._run_phrased(
                    corrected, options, layer, suggestion.corrections, clock
                )
                result.matched = self._match_terms(corrected)
                result.expansion = retrieved.expansion
                result.counter = retrieved.counter
                result.layer, result.corrections = layer, dict(suggestion.corrections)
            elif hits:
                result.suggestion = _replace_words(query.text, suggestion.corrections)
        result.hits = hits
        if options.count_total and result.counter is not None:
            with clock("count"):
                result.total = result.counter()
        result.timings_ms["total"] = (time.perf_counter() - started) * 1000
        return result

    def _unknown_sources(self, query: ParsedQuery) -> list[str]:
        """A `source:` filter naming no source finds nothing: say so rather than just "No results"."""
        if not query.filters.sources:
            return []
        known = [source.name for source in self.store.sources.list()]
        return [
            f"source:{name} names no source (sources: {', '.join(known) or 'none yet'})"
            for name in query.filters.sources
            if name not in known
        ]

    def _newest_matching(self, query: ParsedQuery, options: SearchOptions) -> list[Hit]:
        found = browse.newest_documents(self.store, build_condition(query), options.files or options.limit)
        rows = self.store.chunks.rows([cid for cid, _ in found])
        nothing = Highlighter(MatchTerms(), self.store.analyzer)  # a filter-only query has no words to mark
        hits = []
        for rank, (cid, date) in enumerate(found, 1):
            if cid in rows:
                hits.append(self._hit(rows[cid], browse.date_breakdown(rank, date), nothing))
        return hits

    # -- steps -------------------------------------------------------------------

    def _run_phrased(
        self, query: ParsedQuery, options: SearchOptions, layer: Layer, corrections: dict[str, str], clock: Stopwatch
    ) -> tuple[list[Hit], _Retrieved, PhraseFallback]:
        """The search, with its quoted phrases required while chunks hold them (search.phrases):
        phrases no allowed chunk contains are searched as words; when fewer hits than asked
        for hold the rest, they come first and the results for the words follow."""
        if not query.phrases or not options.phrases:
            words = query if options.phrases else replace(query, relaxed=query.phrases)
            hits, retrieved = self._run(words, options, layer, corrections, clock)
            return hits, retrieved, PhraseFallback()
        from kenning.search import phrases  # a query that quotes a phrase

        if phrases.is_prose(query):  # quotes in a question written out: quotation, not required
            hits, retrieved = self._run(replace(query, relaxed=query.phrases), options, layer, corrections, clock)
            phrases.mark_holders(hits, query.phrases, self.store.analyzer)
            return hits, retrieved, phrases.quotation(query)
        with clock("phrases"):
            check = phrases.check(self.store, query, build_condition(replace(query, relaxed=query.phrases)))
        searched = replace(query, relaxed=check.relaxed)
        first: list[Hit] = []
        if searched.required_phrases:
            first, retrieved = self._run(searched, options, layer, corrections, clock)
            if len(first) >= options.limit:
                return first, retrieved, check.outcome()
        hits, retrieved = self._run(replace(query, relaxed=query.phrases), options, layer, corrections, clock)
        merged = phrases.first_then_words(first, hits, options.limit)
        # Results for the words follow only when some do: else every hit holds the phrases.
        followed = searched.required_phrases and len(merged) > len(first)
        return merged, retrieved, check.outcome(first=len(first) if followed else None)

    def _run(
        self, query: ParsedQuery, options: SearchOptions, layer: Layer, corrections: dict[str, str], clock: Stopwatch
    ) -> tuple[list[Hit], _Retrieved]:
        condition = build_condition(query)
        retrieved = self._retrieve(query, condition, options, clock)
        with clock("definitions"):
            self._add_definitions(query, retrieved)
        with clock("fuse"):
            pool = self._fuse(retrieved, options)
        if self._wants_feedback(retrieved, options):
            with clock("feedback"):
                self._add_feedback_list(query, condition, pool, retrieved, options)
        if self._wants_feedback(retrieved, options) and options.meaning_feedback:
            with clock("meaning feedback"):
                if self._move_query_vector(pool, retrieved, options):
                    pool = self._fuse(retrieved, options)
        pool = self._above_meaning_floor(pool, retrieved, options.meaning_floor)
        if self._wants_neighbours(retrieved, options):
            with clock("neighbours"):
                self._add_neighbours_list(pool, retrieved, options)
        with clock("rerank"):
            hits = self._rerank(query, pool, retrieved, options, layer, corrections)
        # Counted on demand (SearchResult.counter): the app shows the hits first, then the total.
        retrieved.counter = partial(
            totals.count_total,
            self.store,
            retrieved.matches,
            [h.chunk_id for h in hits],
            retrieved.lists,
            condition,
            options,
            MEANING_FLOOR,
        )
        return hits, retrieved

    def _retrieve(
        self, query: ParsedQuery, condition: ChunkFilter, options: SearchOptions, clock: Stopwatch
    ) -> _Retrieved:
        lists: dict[str, list[fts.Ranked]] = {}
        weights = {**rank_fusion.DEFAULT_WEIGHTS, **options.weights}
        notes: list[str] = []
        # The model runs (GIL released) while SQLite answers the lexical lists.  The
        # vector scan stays on this thread: overlapping it with SQLite as well measured
        # slower on 2 cores (hybrid p50 60 against 56 ms).
        embedded = query.embedding_text(options.query_text)
        in_sentences = _sentences_read(embedded, options)
        pending_vec = self._start_query_embedding(embedded, options, in_sentences)
        # A store whose vector walk runs beside its keyword statements (a team store: on
        # a connection of its own) walks as soon as the query vector is ready.
        walking = self._start_walk(pending_vec, condition, options)
        with clock("lexical"):
            matches: dict[LexicalIndex, KeywordQuery] = {}
            by_rank: set[str] = set()
            porter_terms = self._lexical_lists(query, condition, options, lists, weights, matches, by_rank)
        query_vec = None
        candidates = None
        openings: dict[int, np.ndarray] = {}
        opening_parts: dict[int, tuple[float, float]] = {}
        if pending_vec is not None and self.vectors is not None:
            if not pending_vec.done() and not self.vectors.concurrent:
                # The model is still loading (a new query in a fresh process) or embedding:
                # meanwhile read what the scan reads first, which needs no query vector:
                # the store's codes (0.1-0.3 s at 100k chunks) and the rows this filter
                # allows (30-50 ms).  A no-op once they are held.  Not a team store's: its
                # read-ahead is walks of the server's index, for an app to start ahead
                # (Searcher.warm), not beside a search's own walk.
                with clock("vector"):
                    self.vectors.load(condition)
            with clock("embed"):
                query_vec = pending_vec.result()
            with clock("vector"):
                found = {r.chunk_id for ranked in lists.values() for r in ranked}  # rescored exactly too
                if walking is not None:
                    candidates = self.vectors.with_vectors(walking.result(), found)
                else:
                    candidates = self.vectors.candidates(query_vec, condition, options.depth, also=found)
                if options.opening_mix:
                    openings = self.vectors.openings(candidates.ids.tolist())
                lists["vector"] = self.vectors.rank(
                    candidates, query_vec, options.depth, openings, options.opening_mix, opening_parts
                )
        elif options.mode in ("hybrid", "vector"):
            notes.append("semantic search is off: no embedding model")
        return _Retrieved(
            lists,
            weights,
            query_vec,
            notes,
            porter_terms,
            matches=matches,
            by_rank=by_rank,
            vector_candidates=candidates,
            openings=openings,
            opening_parts=opening_parts,
            sentences=in_sentences if query_vec is not None else 0,
        )

    def _start_query_embedding(self, text: str, options: SearchOptions, in_sentences: int) -> Future[np.ndarray] | None:
        """The query vector of text, being made on the embedding thread (None: no meaning search)."""
        if options.mode not in ("hybrid", "vector") or self.embedder is None or self.vectors is None:
            return None
        if self._embed_pool is None:
            from concurrent.futures import ThreadPoolExecutor  # semantic searches only

            self._embed_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kenning-query-embed")
        if not in_sentences:
            return self._embed_pool.submit(self.embedder.embed_query, text)
        from kenning.search.sentences import query_vector

        return self._embed_pool.submit(query_vector, self.embedder.embed_query, text)

    def _start_walk(
        self, pending_vec: Future[np.ndarray] | None, condition: ChunkFilter, options: SearchOptions
    ) -> Future[Candidates] | None:
        """The backend's nearest candidates, asked on the embedding thread right after the
        query vector (queued behind it), when the store walks beside its keyword statements."""
        vectors = self.vectors
        if pending_vec is None or vectors is None or self._embed_pool is None or not vectors.concurrent:
            return None
        return self._embed_pool.submit(lambda: vectors.candidates(pending_vec.result(), condition, options.depth))

    def _lexical_lists(
        self,
        query: ParsedQuery,
        condition: ChunkFilter,
        options: SearchOptions,
        lists: dict[str, list[fts.Ranked]],
        weights: dict[str, float],
        matches: dict[LexicalIndex, KeywordQuery],
        by_rank: set[str],
    ) -> tuple[str, ...]:
        """Fills the porter and trigram lists (`matches` with what each searched for,
        `by_rank` with those to read by rank); returns the words the porter list searched for."""
        terms = query.content_terms
        porter_terms: tuple[str, ...] = ()
        if options.mode in ("hybrid", "lexical"):
            selective = is_selective(query)
            porter_terms, ranked_terms, only_scoring = self._porter_words(query, options)
            # The total counts what the query's own words match: its stop words rank
            # (bm25 weighs them) but do not make a chunk a match.
            matches["porter"] = KeywordQuery(tuple(dict.fromkeys(query.content_terms)), query.phrases)
            found = fts.keyword_list(
                self.store,
                "porter",
                KeywordQuery(ranked_terms, query.phrases, only_scoring),
                condition,
                options.depth,
                selective=selective,
                title_weight=options.title_weight,
            )
            _keep(lists, by_rank, "porter", found)
            substrings = fts.trigram_terms(self.term_stats, terms)
            if substrings and options.trigram:
                matches["trigram"] = KeywordQuery(tuple(substrings))
                found = fts.keyword_list(
                    self.store,
                    "trigram",
                    matches["trigram"],
                    condition,
                    options.depth,
                    selective=selective,
                    title_weight=options.title_weight,
                )
                _keep(lists, by_rank, "trigram", found)
                # The substring list speaks for only the words sent to it.
                weights["trigram"] *= len(substrings) / len(terms)
        return porter_terms

    def _porter_words(
        self, query: ParsedQuery, options: SearchOptions
    ) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
        """(the distinct words the porter list searches for, the same with the query's
        repeats, the words that only add to the scores of the chunks those find).

        Common words stay in (unless options.stopwords removes them): bm25's own
        inverse document frequency already makes a word found everywhere worth almost
        nothing, and where it is not found everywhere it is evidence (they find chunks
        too: when they only scored, in the chunks the content words find, ADI's Recall@100
        fell 0.073 for the keyword list, 0.026 for hybrid).  In a large index
        TermStats.without_common keeps the commonest from finding chunks, for speed;
        they still score in the chunks the others find (TermStats.only_scoring)."""
        sequence = query.ranking_terms if options.stopwords else query.weighted_terms
        if options.mode in COMPOUND_WORDS_MODES:
            sequence = tuple(w for term in sequence for w in compound_words(term))
        porter_terms = self.term_stats.without_common(tuple(dict.fromkeys(sequence)))
        kept = set(porter_terms)
        with_repeats = sequence if options.term_frequency else tuple(dict.fromkeys(sequence))
        left_out = tuple(t for t in with_repeats if t not in kept)
        return (
            porter_terms,
            tuple(t for t in with_repeats if t in kept),
            self.term_stats.only_scoring(porter_terms, left_out),
        )

    def _add_definitions(self, query: ParsedQuery, retrieved: _Retrieved) -> None:
        """The definition list (search.definitions): the code chunks among the keyword
        lists' first that define a word of the query."""
        found_by = (r.chunk_id for name in QUERY_WORD_LISTS for r in retrieved.lists.get(name, [])[: definitions.DEPTH])
        ids = list(dict.fromkeys(found_by))  # a chunk both keyword lists found is one candidate
        if not ids:
            return
        retrieved.rows.update(self.store.chunks.rows(ids))
        found = definitions.defining((retrieved.rows[c] for c in ids if c in retrieved.rows), query.content_terms)
        if found:
            retrieved.lists[definitions.LIST] = found
            retrieved.weights.setdefault(definitions.LIST, definitions.WEIGHT)

    @staticmethod
    def _wants_feedback(retrieved: _Retrieved, options: SearchOptions) -> bool:
        """Hybrid search with both a keyword and a meaning list (either feedback may then run)."""
        lists = retrieved.lists
        return options.mode == "hybrid" and bool(lists.get("porter")) and bool(lists.get("vector"))

    @staticmethod
    def _feedback_chunks(pool: dict[int, rank_fusion.Candidate]) -> list[rank_fusion.Candidate]:
        """The best chunks that both the keyword and the meaning list found: in a small or
        off-topic index the top of the pool can be anything, their agreement cannot."""
        agreed = [c for c in pool.values() if "porter" in c.lists and "vector" in c.lists]
        return sorted(agreed, key=lambda c: c.tie_order)[: feedback.FEEDBACK_CHUNKS]

    def _move_query_vector(
        self, pool: dict[int, rank_fusion.Candidate], retrieved: _Retrieved, options: SearchOptions
    ) -> bool:
        """Ranks the vector list again with the query moved toward its best results (the
        candidates were filtered when they were found)."""
        from kenning.search.meaning_feedback import moved_query

        best = self._feedback_chunks(pool)
        known = retrieved.vector_candidates
        if not best or retrieved.query_vec is None or self.vectors is None or known is None:
            return False
        # The moved query is rescored over the chunks the first scan rescored and those the
        # lists found since (the feedback words'): no second scan of every vector.
        candidates = self.vectors.with_vectors(known, (r.chunk_id for r in retrieved.lists.get("feedback", [])))
        found = candidates.vectors_of([c.chunk_id for c in best])
        if not found:
            return False
        moved = moved_query(retrieved.query_vec, found)
        openings = retrieved.openings
        if options.opening_mix:
            openings = {**openings, **self.vectors.openings(c for c in candidates.ids.tolist() if c not in openings)}
        # Moved, the list's scores are not the cosine to the query as typed: explained by moved_note.
        retrieved.lists["vector"] = self.vectors.rank(candidates, moved, options.depth, openings, options.opening_mix)
        retrieved.openings, retrieved.opening_parts = openings, {}
        retrieved.vector_candidates = candidates  # the floor and the hits' cosines read these vectors too
        retrieved.moved_toward = len(found)
        return True

    def _add_feedback_list(
        self,
        query: ParsedQuery,
        condition: ChunkFilter,
        pool: dict[int, rank_fusion.Candidate],
        retrieved: _Retrieved,
        options: SearchOptions,
    ) -> None:
        """Searches for the best first hits' own words (see search.feedback) and fuses what
        they find into the pool (the last list: the others are not fused again)."""
        best = self._feedback_chunks(pool)
        if not options.feedback or not best:
            return
        rows = self._rows([c.chunk_id for c in best], retrieved.rows)  # most were read for the definitions
        retrieved.rows.update(rows)
        texts = [f"{row.title}\n{row.text}" for _, row in sorted(rows.items())]  # in id order, as the store reads them
        words = feedback.expansion_words(self.index_counts, texts, retrieved.porter_terms, self.term_stats.total())
        if not words:
            return
        found = fts.keyword_list(
            self.store,
            "porter",
            KeywordQuery(tuple(words)),
            condition,
            options.depth,
            selective=is_selective(query),
            title_weight=options.title_weight,
        )
        _keep(retrieved.lists, retrieved.by_rank, "feedback", found)
        retrieved.expansion = tuple(words)
        weight = retrieved.weights.get("feedback", 1.0)
        rank_fusion.add_list(pool, "feedback", found.ranked, weight, options.fusion, "feedback" in retrieved.by_rank)

    def _wants_neighbours(self, retrieved: _Retrieved, options: SearchOptions) -> bool:
        if not options.neighbours or retrieved.query_vec is None or self.vectors is None:
            return False  # (a lexical search does not import search.neighbours)
        if definitions.LIST in retrieved.lists:  # a symbol looked up: its definition, not what resembles its uses
            return False
        from kenning.search.neighbours import LIST, MODES

        return options.mode in MODES and retrieved.weights.get(LIST, 0.0) > 0

    def _add_neighbours_list(
        self, pool: dict[int, rank_fusion.Candidate], retrieved: _Retrieved, options: SearchOptions
    ) -> None:
        """The neighbours list (search.neighbours) over the fused ranking's first chunks
        among those whose vectors the search holds, and that the rerank keeps."""
        import heapq
        import itertools

        from kenning.search import neighbours

        known = retrieved.vector_candidates or Candidates.empty()
        row_of = {cid: row for row, cid in enumerate(known.ids.tolist())}
        # A chunk the vector scan did not read (found by the feedback words alone) sits
        # out: reading its vector would cost more than it gave (no figure of the five
        # collections moved), and the hits' cosines read the ones they need.
        held = (c for c in pool.values() if c.chunk_id in row_of)
        order = heapq.nsmallest(2 * neighbours.POOL, held, key=lambda c: c.tie_order)
        unmatched = sorted(c.chunk_id for c in order if matches_no_query_word(c.lists))
        cosines = self._cosines(retrieved.query_vec, unmatched, known)  # nothing to read
        # The chunks the rerank keeps (_score).
        kept = (c for c in order if not _no_evidence(c.lists, cosines.get(c.chunk_id), options.meaning_floor))
        first = list(itertools.islice(kept, neighbours.POOL))
        found = neighbours.neighbour_scores(
            [c.chunk_id for c in first], [c.fused for c in first], known.matrix[[row_of[c.chunk_id] for c in first]]
        )
        if found:
            retrieved.lists[neighbours.LIST] = found
            rank_fusion.add_list(pool, neighbours.LIST, found, retrieved.weights[neighbours.LIST], options.fusion)

    def _fuse(self, retrieved: _Retrieved, options: SearchOptions) -> dict[int, rank_fusion.Candidate]:
        if options.fusion == "linear":
            return rank_fusion.linear_fuse(retrieved.lists, retrieved.weights, by_rank=retrieved.by_rank)
        return rank_fusion.rrf_fuse(retrieved.lists, retrieved.weights)

    def _ceiling(self, retrieved: _Retrieved, options: SearchOptions) -> tuple[float, float]:
        """(fused ceiling, what one list's first place adds) for normalising to [0, 1]
        and scaling the rerank's bounded contributions."""
        names = sorted(retrieved.lists)
        weights = retrieved.weights
        first_place = max(weights.get(n, 1.0) for n in names)  # the most one list's first item adds
        if options.fusion == "linear":
            return rank_fusion.linear_ceiling(names, weights), first_place
        return rank_fusion.rrf_ceiling(names, weights), first_place / (rank_fusion.RRF_K + 1)

    def _compounds(self, query: ParsedQuery, options: SearchOptions) -> tuple[tuple[str, ...], ...]:
        """The index terms of each compound the keyword list searched as its words
        (COMPOUND_WORDS_MODES), in the order written."""
        if not options.compound_adjacency or options.mode not in COMPOUND_WORDS_MODES:
            return ()
        if len(query.content_terms) > COMPOUND_NAME_WORDS:
            return ()
        analyzer = self.store.analyzer
        found = (tuple(analyzer.tokens(t)) for t in dict.fromkeys(query.ranking_terms) if len(compound_words(t)) > 1)
        return tuple(stems for stems in found if len(stems) > 1)

    def _rerank(
        self,
        query: ParsedQuery,
        pool: dict[int, rank_fusion.Candidate],
        retrieved: _Retrieved,
        options: SearchOptions,
        layer: Layer,
        corrections: dict[str, str],
    ) -> list[Hit]:
        if not pool:
            return []
        ceiling, first_place = self._ceiling(retrieved, options)
        # A hit first in every list with full proximity has relevance exactly 1.
        prox_scale = PROXIMITY_SHARE * first_place
        if not options.proximity or options.mode not in PROXIMITY_MODES:
            prox_scale = 0.0
        compounds = self._compounds(query, options)
        compound_scale = COMPOUND_SHARE * first_place if compounds else 0.0
        context = _RankContext(
            prox_scale=prox_scale,
            normaliser=ceiling + prox_scale + compound_scale if options.normalise else 1.0,
            now=self.clock(),
            layer=layer,
            corrections=dict(corrections),
            fusion=options.fusion,
            expansion=retrieved.expansion,
            moved_toward=retrieved.moved_toward,
            sentences=retrieved.sentences,
            signals=options.signals,
            spread=options.base_spread,
            floor=options.meaning_floor,
            opening_weight=options.opening_mix,
            compound_scale=compound_scale,
            compounds=compounds,
        )
        highlighter = Highlighter(self._match_terms(query), self.store.analyzer)
        # Best first by what the signals cannot change (fused evidence, then the tie order).
        order = sorted(pool.values(), key=lambda c: c.tie_order)
        scored: list[_Scored] = []
        start, size = 0, _first_batch(order, options.limit, context) if options.files is None else len(order)
        while start < len(order):
            if options.files is None and self._none_can_reach(order[start], scored, options.limit, context):
                break
            batch = [c.chunk_id for c in order[start : start + size]]
            start, size = start + size, RERANK_BATCH
            rows = self._rows(batch, retrieved.rows)  # a chunk deleted meanwhile is left out
            found = {cid: pool[cid] for cid in batch if cid in rows}
            scored.extend(self._score(query, found, rows, retrieved, context))
        scored.sort(key=lambda t: (-t[0].final, *t[1].tie_order))
        kept = scored[: options.limit] if options.files is None else _best_files(scored, options.files, options.depth)
        return [self._hit(row, b, highlighter) for b, _, row in kept]

    @staticmethod
    def _none_can_reach(
        next_best: rank_fusion.Candidate, scored: list[_Scored], limit: int, context: _RankContext
    ) -> bool:
        """True when `limit` hits are scored and the best candidate left (so every one
        left) would stay below the last of them even with every bonus: the hits cannot
        change, so a search as deep as CANDIDATE_DEPTH costs the rerank what the hits do."""
        if len(scored) < limit:
            return False
        last = sorted((b.final for b, _, _ in scored), reverse=True)[limit - 1]
        return best_final(_base_at_most(next_best, context)) < last

    def _score(
        self,
        query: ParsedQuery,
        pool: dict[int, rank_fusion.Candidate],
        rows: dict[int, ChunkRow],
        retrieved: _Retrieved,
        context: _RankContext,
    ) -> list[_Scored]:
        """Each candidate's breakdown: proximity, then signals."""
        cosines = self._cosines(retrieved.query_vec, list(pool), retrieved.vector_candidates)
        ambiguous: dict[int, list[str]] = {}
        refs = load_reference_times(self.store, [rows[c] for c in pool], ambiguous)
        matcher = None
        if context.prox_scale > 0:  # proximity is off by default: its stemming of every chunk is skipped
            analyzer = self.store.analyzer
            matcher = StemMatcher(query_stems(query.content_terms, analyzer), analyzer)
            matcher.prepare(text for row in rows.values() for text in (row.title, row.text))
        together = None
        if context.compounds:
            together = StemMatcher(list(dict.fromkeys(s for c in context.compounds for s in c)), self.store.analyzer)
            together.prepare(text for row in rows.values() for text in (row.title, row.text))
        scored: list[_Scored] = []
        for cid, cand in pool.items():
            if _no_evidence(cand.lists, cosines.get(cid), context.floor):
                # (Meaning-only ones met MEANING_FLOOR before fusion: _above_meaning_floor.)
                continue
            row = rows[cid]
            prox = proximity(matcher, row.title, row.text, row.kind) if matcher else NO_PROXIMITY
            written = _compounds_written(together, row, context.compounds) if together else None
            cosine, opening = cosines.get(cid), None
            if cid in retrieved.opening_parts and "vector" in cand.lists:
                cosine, opening = retrieved.opening_parts[cid]  # the floats its vector score was made of
            breakdown = self._breakdown(cand, row, prox, written, cosine, refs.get(cid, {}), context)
            if opening is not None:
                breakdown.opening, breakdown.opening_weight = opening, context.opening_weight
            breakdown.ambiguous_links = tuple(ambiguous.get(cid, ()))
            scored.append((breakdown, cand, row))
        return scored

    def _rows(self, chunk_ids: list[int], known: dict[int, ChunkRow]) -> dict[int, ChunkRow]:
        """The chunks' rows, read from the store unless already read."""
        rows = {cid: known[cid] for cid in chunk_ids if cid in known}
        missing = [cid for cid in chunk_ids if cid not in known]
        if missing:
            rows.update(self.store.chunks.rows(missing))
        return rows

    def _match_terms(self, query: ParsedQuery) -> MatchTerms:
        """The words to highlight: the query's own, and those the trigram list matched inside tokens."""
        return match_terms(query, fts.trigram_terms(self.term_stats, query.content_terms))

    def _breakdown(
        self,
        cand: rank_fusion.Candidate,
        row: ChunkRow,
        prox: Proximity,
        written: float | None,
        cosine: float | None,
        ref_times: dict[str, float | None],
        context: _RankContext,
    ) -> Breakdown:
        proximity_value = context.prox_scale * prox.raw + context.compound_scale * (written or 0.0)
        relevance = min(1.0, (cand.fused + proximity_value) / context.normaliser)
        base = calibrated_base(relevance, context.spread)
        rec = recency(row.updated_at, row.created_at, context.now) if context.signals else 0.0
        git = git_activity(ref_times if context.signals else {}, context.now)
        pen = penalty(row.title, row.text) if context.signals else 1.0
        final = final_score(base, rec, git.score, pen)
        return Breakdown(
            lists=dict(sorted(cand.lists.items())),
            fused=cand.fused,
            proximity=proximity_value,
            normaliser=context.normaliser,
            relevance=relevance,
            spread=context.spread,
            base=base,
            cosine=cosine,
            recency=rec,
            recency_bonus=final.recency_bonus,
            git=git.score,
            git_bonus=final.git_bonus,
            git_paths=git.changed_paths,
            penalty=pen,
            final=final.final,
            shown=shown_score(final.final, context.spread),
            layer=context.layer,
            corrections=dict(context.corrections),
            fusion=context.fusion,
            proximity_parts={"title": prox.title, "span": prox.span, "phrase": prox.phrase}
            | ({} if written is None else {"compound": written}),
            expansion=context.expansion if "feedback" in cand.lists else (),
            moved_toward=context.moved_toward if "vector" in cand.lists else 0,
            sentences=context.sentences if "vector" in cand.lists else 0,
        )

    def _above_meaning_floor(
        self, pool: dict[int, rank_fusion.Candidate], retrieved: _Retrieved, floor: float | None
    ) -> dict[int, rank_fusion.Candidate]:
        """The pool without meaning-only chunks whose cosine to the query as typed is under
        the floor.  Unmoved, the vector list is ordered by that cosine, so those are its
        tail; moved (meaning feedback), the cosines are looked up."""
        if floor is None:
            return pool
        alone = [cid for cid, c in pool.items() if meaning_only(c.lists)]
        if retrieved.moved_toward:
            cosine = self._cosines(retrieved.query_vec, alone, retrieved.vector_candidates)
        else:  # the chunk's own cosine, not the score mixed with its document's opening
            parts = retrieved.opening_parts
            cosine = {cid: parts[cid][0] if cid in parts else pool[cid].lists["vector"].score for cid in alone}
        dropped = {cid for cid in alone if cosine.get(cid, 0.0) < floor}
        return {cid: c for cid, c in pool.items() if cid not in dropped}

    def _cosines(
        self, query_vec: np.ndarray | None, chunk_ids: list[int], known: Candidates | None = None
    ) -> dict[int, float]:
        """Each chunk's cosine to the query as typed; vectors the scan already read are not read again."""
        if query_vec is None or self.vectors is None:
            return {}
        return self.vectors.cosines(query_vec, chunk_ids, known)

    def _hit(self, row: ChunkRow, breakdown: Breakdown, highlighter: Highlighter) -> Hit:
        snippet, spans = make_snippet(row.text, highlighter)
        return Hit(
            chunk_id=row.chunk_id,
            source=row.source,
            path=row.rel_path,
            abs_path=row.abs_path,
            title=row.title,
            kind=row.kind,
            line_start=row.line_start,
            line_end=row.line_end,
            snippet=snippet,
            spans=spans,
            score=breakdown.shown,
            breakdown=breakdown,
            text=row.text,
            location=row.location,
            root=row.root,
            store_label=row.store_label,
        )

    # -- words the index does not know --------------------------------------------

    def _unknown_words(self, query: ParsedQuery) -> list[str]:
        """The words no search of this kind could find: unknown to the index, or found only
        where it does not look (a word only in test files, when tests are left out)."""
        scope = searchable_scope(query)
        known = [t for t in query.content_terms if self.term_stats.known(t)]
        found = self.vocabulary.in_scope_each(known, scope, cap=1) if known else {}
        return [t for t in query.content_terms if not found.get(t)]

    def _floored(self, query: ParsedQuery, options: SearchOptions) -> SearchOptions:
        """The options with the meaning floor this query gets.  In vector mode every hit is
        meaning-only; there the floor is for queries of which no word occurs in the index
        (`qwxzv`), so a real query's ranking by meaning is never cut short."""
        if options.mode != "vector" or options.meaning_floor is None:
            return options
        if any(self.term_stats.known(t) for t in query.content_terms):
            return replace(options, meaning_floor=None)
        return options

    def _suggestion(self, query: ParsedQuery) -> Suggestion | None:
        unknown = self._unknown_words(query)
        if not unknown:
            return None
        from kenning.search.suggest import suggest  # a word the index does not know

        known = [t for t in query.content_terms if t not in unknown]
        return suggest(self.store, self.vocabulary, unknown, known, searchable_scope(query))


def _no_evidence(lists: Mapping[str, object], cosine: float | None, floor: float | None) -> bool:
    """Feedback words alone (with, at most, a moved query's meaning) are no evidence: a
    hit no query word matched must mean what the query does (None: no floor)."""
    return floor is not None and matches_no_query_word(lists) and (cosine or 0.0) < min(floor, RELATED_WORDS_FLOOR)


def _sentences_read(text: str, options: SearchOptions) -> int:
    """The sentences the query vector reads the question in besides whole (search.sentences)."""
    if options.sentences is False or options.mode not in ("hybrid", "vector"):
        return 0  # (a keyword search does not import search.sentences)
    from kenning.search import sentences

    if options.sentences is None and options.mode not in sentences.MODES:
        return 0
    return sentences.read_in(text)


def _keep(lists: dict[str, list[fts.Ranked]], by_rank: set[str], name: str, found: KeywordList) -> None:
    lists[name] = found.ranked
    if found.by_rank_only:
        by_rank.add(name)
    else:
        by_rank.discard(name)


def _fuzzy_layer(fusion: Fusion) -> Layer:
    return "linear-fuzzy" if fusion == "linear" else "rrf-fuzzy"


def _corrected_layer(fusion: Fusion) -> Layer:
    return "linear-corrected" if fusion == "linear" else "rrf-corrected"


def _apply_corrections(query: ParsedQuery, corrections: dict[str, str]) -> ParsedQuery:
    return parse_query(_replace_words(query.text, corrections))


def _replace_words(text: str, corrections: dict[str, str]) -> str:
    import re

    def swap(m: re.Match[str]) -> str:
        word = m.group(0)
        return corrections.get(word.lower(), word)

    return re.sub(r"[^\W_]+", swap, text)
