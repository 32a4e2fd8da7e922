"""Pseudo-relevance feedback: a fourth ranked list, "feedback", that searches for the
words the best first results use and the query does not, so chunks that say the same
thing in other words are found too.

Hybrid search only.  Its first fused ranking has the agreement of the keyword and the
meaning lists, so its top chunks are a trustworthy sample of what the user means.
The words are chosen by Bo1 (Amati's Bose-Einstein divergence-from-randomness
expansion model) with the defaults of Terrier's query expansion: the 3 best
documents, 10 words.  A word is worth adding when it is frequent in those chunks and
rare in the index:

    w(t) = tf_feedback · log2((1 + Pn) / Pn) + log2(1 + Pn),   Pn = cf(t) / chunks

Guards, each for a way feedback goes wrong: only chunks that both the keyword and the
meaning list found are read (no agreement, no feedback); a word must occur in them
more often than chance (tf_feedback > chunks read · Pn), so in a tiny index, where the
best chunks are the whole index, nothing is added; and in a large index (20k+ chunks)
a word in over 1% of chunks is left out, which bounds the list's cost.

The list joins the fusion with weight 0.5, like the trigram list: secondary evidence
that can lift a chunk the other lists also found, or bring in one they missed, but
never outweigh the user's own words.  Its words are searched on their own, so the
list costs one query over fairly rare words, not a second pass over the user's.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from functools import cached_property

from kenning.search.fts import ELIDE_FROM_CHUNKS
from kenning.search.query import STOPWORDS
from kenning.search.textmatch import TOKEN  # a run of letters and digits, as _written_form's pattern reads one
from kenning.storage.api import Analyzer, Store

FEEDBACK_CHUNKS = 3
FEEDBACK_WORDS = 10
CANDIDATES = 40  # Bo1 picks among the feedback chunks' most frequent words
MIN_CHARS = 3
FEEDBACK_WORD_SHARE = 0.01


def bo1_weight(feedback_tf: int, collection_tf: int, chunks: int) -> float:
    expected = collection_tf / chunks
    return feedback_tf * math.log2((1 + expected) / expected) + math.log2(1 + expected)


class IndexCounts:
    """(chunks holding it, occurrences) per porter stem, read from the fts5vocab table.

    A lookup costs up to a millisecond at 100k chunks, and Bo1 needs only rough
    collection statistics, so counts are kept until the index has grown or shrunk by
    a tenth (exact counts would be re-read after every write while indexing).  Zero
    counts are not kept: a word new to the index must be found once it is indexed."""

    TOLERANCE = 0.1
    MAX_ENTRIES = 100_000

    def __init__(self, store: Store, held: Callable[[str], int | None] | None = None) -> None:
        self.store = store
        # A stem's chunks as held in memory (fuzzy.Vocabulary.held_chunks), or None: a word
        # it shows too common is passed over unread (its count is the costliest to read).
        self._held = held or (lambda stem: None)
        self._counts: dict[str, tuple[int, int]] = {}
        self._basis = 0

    @cached_property
    def stop_stems(self) -> frozenset[str]:
        """The stopwords as the store's analyzer stems them (on first use: the analyzer may
        need its backend, SQLite's a scratch table)."""
        return frozenset(s for word in STOPWORDS for s in self.store.analyzer.tokens(word))

    def known_too_common(self, stem: str, chunks: int) -> bool:
        """Whether the chunks holding stem, as held in memory, make it too common to add."""
        held = self._held(stem)
        return held is not None and _too_common(held, chunks)

    def get(self, stem: str, chunks: int) -> tuple[int, int]:
        return self.get_many([stem], chunks)[stem]

    def get_many(self, stems: Sequence[str], chunks: int) -> dict[str, tuple[int, int]]:
        """get() of each stem; those not kept are read in one ask of the store."""
        if abs(chunks - self._basis) > self.TOLERANCE * self._basis or len(self._counts) > self.MAX_ENTRIES:
            self._counts.clear()
            self._basis = chunks
        missing = [s for s in dict.fromkeys(stems) if s not in self._counts]
        read = self.store.terms.counts_of(missing) if missing else {}
        out = {}
        for stem in stems:
            counts = self._counts.get(stem)
            if counts is None:
                counts = (read[stem].chunks, read[stem].occurrences)
                if counts[0]:
                    self._counts[stem] = counts
            out[stem] = counts
        return out


def expansion_words(counts: IndexCounts, texts: list[str], query_terms: Iterable[str], chunks: int) -> list[str]:
    """The feedback list's words, best first, as they are written in the texts."""
    query_terms = list(query_terms)
    if not query_terms or chunks <= 0:
        return []
    analyzer = counts.store.analyzer
    own = {s for t in query_terms for s in analyzer.tokens(t)}
    stop = counts.stop_stems
    in_feedback = Counter(s for text in texts for s in analyzer.tokenize(text) if _eligible(s, stop) and s not in own)
    scored = []
    candidates = [(s, n) for s, n in in_feedback.most_common(CANDIDATES) if not counts.known_too_common(s, chunks)]
    known = counts.get_many([stem for stem, _ in candidates], chunks)
    for stem, feedback_tf in candidates:
        docs, collection_tf = known[stem]
        if collection_tf and not _too_common(docs, chunks) and feedback_tf > len(texts) * collection_tf / chunks:
            scored.append((-bo1_weight(feedback_tf, collection_tf, chunks), stem))
    scored.sort()
    added: list[str] = []
    words = _ascii_words(texts)
    for _, stem in scored:
        word = _written_form(stem, texts, analyzer, words)
        if word and word not in added:
            added.append(word)
            if len(added) == FEEDBACK_WORDS:
                break
    return added


def _eligible(stem: str, stop: frozenset[str]) -> bool:
    return len(stem) >= MIN_CHARS and not stem.isdigit() and stem not in stop


def _too_common(docs: int, chunks: int) -> bool:
    # Only in a large index (where fts.TermStats also elides the user's common words):
    # a feedback word's posting list is what the feedback list costs, and a word in
    # more than 1% of 20k+ chunks is hardly one topic's own (Bo1 ranks it low anyway).
    return chunks >= ELIDE_FROM_CHUNKS and docs > FEEDBACK_WORD_SHARE * chunks


def _ascii_words(texts: list[str]) -> dict[str, list[str]] | None:
    """The texts' words (runs of letters and digits) lower-cased, in order, by their first
    MIN_CHARS letters; None when a text is not ASCII, where re's case rules are its own
    ("K", the kelvin sign, matches "k")."""
    if not all(text.isascii() for text in texts):
        return None
    by_start: dict[str, list[str]] = {}
    for text in texts:
        for word in TOKEN.findall(text.lower()):
            by_start.setdefault(word[:MIN_CHARS], []).append(word)
    return by_start


def _written_form(stem: str, texts: list[str], analyzer: Analyzer, words: dict[str, list[str]] | None) -> str | None:
    """A word of the texts that porter stems to stem: readable in the explain output,
    and it finds exactly what the stem does.  The stem itself when none starts with it
    and it stems to itself; otherwise nothing.  `words`: the texts' words (_ascii_words),
    or None."""
    # Porter may change a word's last letter ("planetary" -> "planetari"), so the
    # written form is looked for among words starting with the stem less one letter.
    prefix = stem[: max(MIN_CHARS, len(stem) - 1)]
    if words is not None and prefix.isascii() and prefix.isalnum():
        # In ASCII text the pattern below finds exactly these, in the same order, without
        # compiling a pattern per word (0.6 ms of a feedback list's 10 words at 100k chunks).
        lowered = prefix.lower()
        found: Iterable[str] = (w for w in words.get(lowered[:MIN_CHARS], ()) if w.startswith(lowered))
    else:
        pattern = re.compile(r"(?<![^\W_])" + re.escape(prefix) + r"[^\W_]*", re.IGNORECASE)
        found = (m.group(0).lower() for text in texts for m in pattern.finditer(text))
    for word in found:
        if analyzer.tokens(word) == (stem,):
            return word
    return stem if analyzer.tokens(stem) == (stem,) else None
