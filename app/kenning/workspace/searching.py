"""Which engine a search mode gets: decided here once, for the CLI and the app alike.

The rule (docs/architecture.md §2, "Search modes"): a mode asks for the best the
index can give.  "lexical" is keyword search.  "hybrid" and "vector" need the
configured model and vectors made with it; when either is missing (the model is
still loading, could not be loaded, or nothing has been embedded with it yet) the
search runs on keywords alone and the result carries a note saying why and what to
do.  Nobody gets an error instead of results they could have had, and nobody gets
keyword results presented as meaning matches: the note and the result's mode say so.
"""

from __future__ import annotations

from kenning import TYPE_CHECKING
from kenning.core.records import Record
from kenning.core.types import SEARCH_MODES
from kenning.workspace.settings import Settings, SettingsError

if TYPE_CHECKING:  # the engine (and all of search) loads only for a search: `kenning status` never needs it
    from kenning.core.types import Fusion, SearchMode
    from kenning.search.engine import SearchOptions

LOADING_NOTE = "semantic model still loading: keyword results for now"
NO_VECTORS_NOTE = "no vectors for this model yet: keyword results (run `kenning index` to embed)"
UNAVAILABLE_NOTE = "semantic search unavailable ({reason}): keyword results"
# A command-line search is one process per query: its model load is stated, so nobody
# takes it for the search's own speed (the app and `kenning mcp` keep the model).  The
# vector of a query searched before is remembered (search.remembered): no model then.
MODEL_LOAD_NOTE = (
    "loading the semantic model took {seconds:.1f} s of this command "
    "(only for a query not searched before; --mode lexical never loads it; "
    "a running `kenning serve` keeps it loaded)"
)


# What each mode does, in every front end's words (the app's mode buttons, help texts).
_MODE_WORDS = {
    "lexical": "Keywords only (word and substring indexes)",
    "vector": "Meaning only (embeddings)",
}
_FUSION_WORDS = {"linear": "their scores blended (linear fusion)", "rrf": "their ranks fused (RRF)"}


def mode_description(mode: SearchMode, fusion: Fusion) -> str:
    """One line saying what a mode searches with, under the fusion in effect."""
    if mode == "hybrid":
        return f"Keywords and meaning, {_FUSION_WORDS[fusion]}"
    return _MODE_WORDS[mode]


class SearchPlan(Record, frozen=True):
    """How a search will run, and why that differs from what was asked."""

    mode: SearchMode  # the mode the engine runs: the requested one, or "lexical"
    semantic: bool  # True when the engine needs the embedder
    note: str | None  # why the plan differs from the request, for the user


def plan_search(
    requested: str,
    *,
    model_loaded: bool,
    vectors_ready: bool,
    model_error: str | None = None,
) -> SearchPlan:
    """The mode a query runs in, given the model's and the index's state.

    model_loaded: the embedder is ready (the app's once its model is in memory; the CLI's
    at once: it loads its model only if a query vector is not remembered, and falls back
    to keywords with UNAVAILABLE_NOTE when that load fails, see search.remembered);
    vectors_ready: the store has vectors for that embedder's fingerprint;
    model_error: why the model could not be loaded (None while loading or loaded).
    """
    if requested not in SEARCH_MODES:
        raise SettingsError(f"mode must be one of {', '.join(SEARCH_MODES)} (not {requested!r}).")
    if requested == "lexical":
        return SearchPlan("lexical", False, None)
    if model_error:
        return SearchPlan("lexical", False, UNAVAILABLE_NOTE.format(reason=model_error))
    if not model_loaded:
        return SearchPlan("lexical", False, LOADING_NOTE)
    if not vectors_ready:
        return SearchPlan("lexical", False, NO_VECTORS_NOTE)
    return SearchPlan(requested, True, None)


def search_options(
    settings: Settings,
    mode: SearchMode,
    *,
    limit: int | None = None,
    fusion: Fusion | None = None,
    count_total: bool = False,
    files: int | None = None,
) -> SearchOptions:
    """Options for one query: the settings, with one command's flags on top; count_total:
    the result says how many chunks and files match in all (SearchResult.total); files:
    the hits of that many files (a list grouped by file, the app's), not `limit` chunks."""
    from kenning.search.engine import SearchOptions

    return SearchOptions(
        limit=max(1, limit if limit is not None else settings.limit),
        mode=mode,
        fusion=fusion or settings.fusion,
        weights=dict(settings.weights),
        count_total=count_total,
        files=files,
    )
