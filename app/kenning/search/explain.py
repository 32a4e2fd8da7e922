"""The readable rules of the ranking, written from the constants that make it.

Every front end that explains a score (the window's breakdown, `kenning search
--explain`) takes its words from here, so tuning a constant in fusion.py, signals.py
or vector.py changes the explanation with it.
"""

from __future__ import annotations

import math

from kenning.core.types import PROSE_WORDS, Breakdown, ListScore
from kenning.search import fusion, neighbours, signals

# Why a hit with a higher score can stand below others (search.phrases).
DEFINITION_NOTE = "defines a symbol the query names: its definition comes before the code that only uses it"
NEIGHBOURS_NOTE = (
    f"reads like the other strong hits: the mean fused score of its nearest chunks (at most {neighbours.K})"
    f" among the first {neighbours.POOL}, weighted by their cosine to it (score regularisation)"
)
LACKS_PHRASES_RULE = "after every hit holding the quoted phrases, whatever its score: it lacks them"


def phrase_rule(b: Breakdown) -> str | None:
    """What the query's quoted phrases did to this hit, when they were not required of
    every hit (search.phrases): None when they were (or there were none)."""
    if b.quotation:
        held = "lacks" if b.lacks_phrases else "holds"
        return f"{held} the quoted words (in a question of over {PROSE_WORDS} words quotes are not required)"
    return LACKS_PHRASES_RULE if b.lacks_phrases else None


def proximity_parts(b: Breakdown) -> str:
    """The parts of the proximity contribution, each in [0, 1]: "compound" when a compound
    the keyword search read as its words (engine.COMPOUND_WORDS_MODES) was looked for
    written together."""
    parts = b.proximity_parts
    text = f"title {parts.get('title', 0):.2f}, span {parts.get('span', 0):.2f}, phrase {parts.get('phrase', 0):.2f}"
    if "compound" in parts:
        text += f", compound written together {parts['compound']:.2f}"
    return text


def _percent(share: float) -> str:
    return f"{share * 100:g}%"


def contribution_rule(b: Breakdown, s: ListScore) -> str:
    """How one list's contribution was computed, with its value."""
    if b.fusion == "linear" and s.by_rank_of:
        return (
            f"linear contribution, read by rank (every score of the list is at FTS5's floor):"
            f" weight {s.weight:.2f} × {fusion.RRF_K + 1}/({fusion.RRF_K}+{s.by_rank_of}) = {s.contribution:.5f}"
        )
    if b.fusion == "linear":
        return f"linear contribution: weight {s.weight:.2f} × score / the list's best score = {s.contribution:.5f}"
    return f"RRF contribution weight/({fusion.RRF_K}+rank) = {s.contribution:.5f}"


def fusion_rule(b: Breakdown) -> str:
    """How the lists' contributions were made, in one line."""
    if b.fusion == "linear":
        return "the sum of weight × score / the list's best score over the lists"
    return f"the sum of weight/({fusion.RRF_K}+rank) over the lists"


def moved_note(b: Breakdown) -> str:
    """Why the vector list's score is not the hit's cosine (search.meaning_feedback)."""
    from kenning.search.meaning_feedback import MOVE

    where = "halfway" if MOVE == 1.0 else f"by {MOVE:g}"
    cosine = f"{b.cosine:.4f}" if b.cosine is not None else "unknown"
    return (
        f"searched with the query's meaning moved {where} toward its {b.moved_toward} best first hits;"
        f" cosine to the query as typed: {cosine}"
    )


def sentences_note(b: Breakdown) -> str:
    """How the vector list read a question of several sentences (search.sentences)."""
    return (
        f"the question read whole and in its {b.sentences} sentences, each weighted by its content words;"
        " the cosine is to both readings together"
    )


def opening_note(b: Breakdown) -> str:
    """How the vector list's score mixed the chunk's cosine with its document's opening's."""
    w = b.opening_weight
    return (
        f"{1 - w:g} × cosine {b.cosine:.4f} + {w:g} × the document's opening's cosine {b.opening:.4f}"
        " (what the model reads of the document's start)"
    )


def recency_rule() -> str:
    return (
        f"0.5^(age/{signals.RECENCY_HALF_LIFE_DAYS:g} days); bonus up to {_percent(signals.RECENCY_MAX_BONUS)} of base"
    )


def git_rule() -> str:
    return (
        f"share of referenced paths changed in the last {signals.GIT_WINDOW_DAYS:g} days; bonus up to "
        f"{_percent(signals.GIT_MAX_BONUS)} of base"
    )


def penalty_rule() -> str:
    markers = signals.PROPOSAL_MARKERS
    listed = ", ".join(markers[:-1]) + f" or {markers[-1]}" if len(markers) > 1 else markers[0]
    return f"×{signals.PROPOSAL_PENALTY:g} when the chunk starts with {listed}"


def base_formula(b: Breakdown) -> str:
    """How base was made from relevance (signals.calibrated_base), with its numbers."""
    if b.layer == "filter":  # search/browse.py: a list by date keeps its relevance as it is
        return f"{b.relevance:.4f} (listed by date: no calibration, no bonuses)"
    if b.spread is None:
        return f"{b.relevance:.4f} / {signals.SIGNAL_HEADROOM:.2f}"
    return f"exp(({b.relevance:.4f} - 1) / {b.spread:g}) / {signals.SIGNAL_HEADROOM:.2f}"


def shown_formula(b: Breakdown) -> str:
    """How the score shown was made from final (signals.shown_score), with its numbers."""
    if b.layer == "filter":
        return f"{b.final:.4f} (listed by date)"
    if b.spread is None:
        return f"{signals.SIGNAL_HEADROOM:.2f} × {b.final:.4f}"
    return f"1 + {b.spread:g} × ln({signals.SIGNAL_HEADROOM:.2f} × {b.final:.4f})"


# What the number beside each hit means, for every front end (README, app, --explain).
SCORE_MEANING = (
    "the evidence on a 0-1 scale, 1 being the best possible (first in every list the search ran); "
    "recency and git activity add at most 0.06, a TODO/FIXME-style opening takes 0.07"
)


def base_rule() -> str:
    gap = signals.BASE_SPREAD * math.log(signals.SIGNAL_HEADROOM)
    return (
        f"exp((relevance - 1) / {signals.BASE_SPREAD:g}) / {signals.SIGNAL_HEADROOM:.2f}: bonuses can reorder only hits"
        f" whose relevance differs by less than {gap:.3f}"
    )
