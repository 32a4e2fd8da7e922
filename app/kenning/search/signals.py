"""The ranking signals of docs/architecture.md §6, exactly: recency, git activity, proposals.

(Test exclusion is a filter: see filters.py.)  Each function is pure; the clock is
passed in, so tests pin "now".
"""

from __future__ import annotations

import math

from kenning.core.patterns import lazy_pattern
from kenning.core.records import Record

DAY = 86400.0
RECENCY_HALF_LIFE_DAYS = 60.0
RECENCY_MAX_BONUS = 0.15
GIT_WINDOW_DAYS = 30.0
GIT_MAX_BONUS = 0.20
SIGNAL_HEADROOM = 1.0 + RECENCY_MAX_BONUS + GIT_MAX_BONUS
# How far apart two hits' relevance (0..1) may be for the signals to reorder them:
# base = exp((relevance - 1) / BASE_SPREAD) / SIGNAL_HEADROOM, so the largest bonus
# (x1.35) overturns a relevance gap of at most BASE_SPREAD * ln(1.35), about 0.06, and
# git activity alone (x1.2 against x1.0) one of about 0.036: near-equal hits, such as
# two notes a rank apart where FTS5's scores carry no evidence (api.KeywordList.by_rank_only).
# Random ages and git activity cost at most 0.0021 nDCG@10 on Cranfield and NPL with
# it (tests/benchmarks/bench_quality.py); 0.3 cost 0.012 on NPL.
BASE_SPREAD = 0.2
PROPOSAL_PENALTY = 0.7
PROPOSAL_MARKERS = ("TODO:", "FIXME:", "WISH:", "XXX:", "HACK:", "IDEA:")
_LEADING_MARKS = lazy_pattern(r"^[\s#]*")


def recency(updated_at: float | None, created_at: float | None, now: float) -> float:
    """0.5 ** (age_days / 60) on updated_at, created_at when missing; no date → 0."""
    stamp = updated_at if updated_at is not None else created_at
    if stamp is None:
        return 0.0
    age_days = max(0.0, (now - stamp) / DAY)
    return float(0.5 ** (age_days / RECENCY_HALF_LIFE_DAYS))


class GitActivity(Record, frozen=True):
    """How much of what a chunk references changed recently in git."""

    score: float  # changed references / references, 0 with none
    changed_paths: tuple[str, ...]
    references: int


def git_activity(reference_times: dict[str, float | None], now: float) -> GitActivity:
    """reference_times: each referenced path that exists in a linked repo → last commit."""
    if not reference_times:
        return GitActivity(0.0, (), 0)
    cutoff = now - GIT_WINDOW_DAYS * DAY
    changed = sorted(p for p, t in reference_times.items() if t is not None and t >= cutoff)
    return GitActivity(len(changed) / len(reference_times), tuple(changed), len(reference_times))


def is_proposal(title: str, text: str) -> bool:
    """True when the title or the text opens (after whitespace and # marks) with a marker.

    A markdown chunk's text repeats its heading line, which is already its title, so
    the text is also read from just after its leading heading lines.
    """
    for value in (title, text, _after_headings(text or "")):
        opening = _LEADING_MARKS.sub("", value or "", count=1)
        if opening.startswith(PROPOSAL_MARKERS):
            return True
    return False


def _after_headings(text: str) -> str:
    lines = text.lstrip().split("\n")
    index = 0
    while index < len(lines) and (lines[index].startswith("#") or not lines[index].strip()):
        index += 1
    return "\n".join(lines[index:])


def penalty(title: str, text: str) -> float:
    return PROPOSAL_PENALTY if is_proposal(title, text) else 1.0


def calibrated_base(relevance: float, spread: float | None = BASE_SPREAD) -> float:
    """The base the bonuses scale: relevance's order, with gaps the bonuses cannot jump.

    relevance is the fused evidence in [0, 1].  A flat relevance (a rank fusion's
    scores differ by under 10% between rank 1 and 7) would let a +35% bonus decide
    the order; exp((relevance - 1) / spread) turns a relevance gap d into a ratio
    exp(d / spread), so bonuses only reorder hits within spread * ln(1.35) of each
    other.  Dividing by the headroom keeps a fully boosted top hit at exactly 1, so
    the min(1, ...) cap never flattens signals into a tie.  spread None: linear."""
    shaped = relevance if spread is None else math.exp((relevance - 1.0) / spread)
    return shaped / SIGNAL_HEADROOM


def shown_score(final: float, spread: float | None = BASE_SPREAD) -> float:
    """The score people read: final put back on relevance's scale, in [0, 1].

    The inverse of calibrated_base applied to final: 1 + spread * ln(headroom * final).
    Without signals it is the hit's relevance itself (1 = the best of every list, so a
    clear first reads 1.00, not the 0.74 the calibrated base gives it); the bonuses add at
    most spread * ln(1.35), about 0.06, and the proposal penalty takes spread * ln(1/0.7),
    about 0.07.  It orders hits as final does (ties only where it reaches 0 or 1)."""
    if final <= 0.0:
        return 0.0
    value = final * SIGNAL_HEADROOM if spread is None else 1.0 + spread * math.log(final * SIGNAL_HEADROOM)
    return min(1.0, max(0.0, value))


class FinalScore(Record, frozen=True):
    """The fused score with the recency and git bonuses added."""

    recency_bonus: float
    git_bonus: float
    final: float


def final_score(base: float, recency_value: float, git_value: float, penalty_value: float) -> FinalScore:
    """final = min(1, (base + base·0.15·recency + base·0.20·git) × penalty)."""
    recency_bonus = base * RECENCY_MAX_BONUS * recency_value
    git_bonus = base * GIT_MAX_BONUS * git_value
    final = min(1.0, (base + recency_bonus + git_bonus) * penalty_value)
    return FinalScore(recency_bonus, git_bonus, final)


def best_final(base: float) -> float:
    """The most final_score can make of base, whatever the signals (an upper bound, a hair
    above it so that rounding in final_score's sum can never exceed it)."""
    return min(1.0, base * SIGNAL_HEADROOM * (1.0 + 1e-12))
