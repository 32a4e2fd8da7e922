"""Typo correction against the index's own vocabulary (store.terms; SQLite: fts5vocab).

A word is unknown when the word index itself (same tokenizer, same stemmer) finds it
nowhere.  Its candidates are the vocabulary stems near it, found two ways: its stem
compared with the vocabulary's stems by edit distance (allowed distance grows with
word length), and the stems of every single edit of the typed word (a letter left
out, doubled, swapped with its neighbour or replaced): stems can be further apart
than the words ("postgress" keeps its "ss", "postgres" stems to "postgr").  Which
candidates win is search.suggest's choice (words that occur together); alone, the
closest and then the most frequent.  A stem is shown as a real word from the text.

The vocabulary is what a search can return: given a scope (the chunks a search may
show: test files left out unless asked for, disabled sources never), a word found only
outside it is unknown, a candidate found only outside it is no candidate, and counts
and shown forms come from inside it.  The vocabulary counts every chunk, so the scope is
checked on the few words at stake, never on the whole vocabulary.
"""

from __future__ import annotations

import re
import threading
import time
from array import array

from kenning import TYPE_CHECKING
from kenning.core.filters import ChunkFilter
from kenning.core.patterns import lazy_pattern
from kenning.core.records import Record
from kenning.search.fts import ChangeToken
from kenning.storage.api import Analyzer, Store

if TYPE_CHECKING:
    from typing import Any

_TOKEN = lazy_pattern(r"[^\W_]+", re.UNICODE)
_ASCII_LOWERCASE = "abcdefghijklmnopqrstuvwxyz"  # string.ascii_lowercase: importing string compiles Template's pattern
RELOAD_INTERVAL_SECONDS = 10.0
CANDIDATES = 6  # per unknown word, closest first
MAX_WORD_CHARS = 30  # longer "words" are not typos of anything (and their edits are many)
NEAREST = 50  # vocabulary stems kept per word from the edit-distance scan
SCOPE_COUNT_CAP = 200  # chunks in scope counted per candidate: enough to order them


class Candidate(Record, frozen=True):
    """A vocabulary term near a typed word."""

    stem: str  # a vocabulary term
    distance: int  # edits from the typed word (or its stem) to it
    docs: int  # chunks holding it
    # A word the analyzer turns into stem: a searched word is stemmed again, and not
    # every stem is its own stem ("atmospher" → "atmosph"), so stems are looked up by it.
    word: str


def allowed_distance(word: str) -> int:
    if len(word) <= 3:
        return 0
    if len(word) <= 5:
        return 1
    if len(word) <= 9:
        return 2
    return 3


class Vocabulary:
    def __init__(self, store: Store, token: ChangeToken | None = None) -> None:
        self.store = store
        self.token = token or ChangeToken(store)
        self._lock = threading.RLock()
        self._by_length: dict[int, _Terms] = {}
        self._docs: dict[str, int] = {}
        self._version: object = None
        self._loaded_at = 0.0
        self._in_scope: dict[tuple[str, ChunkFilter, int], int] = {}
        self._scope_version: object = None

    def correct(self, word: str, scope: ChunkFilter | None = None) -> str | None:
        """The closest frequent vocabulary word, shown as it appears in the text."""
        found = self.candidates(word, scope=scope)
        return self.surface(found[0].stem, word, scope=scope) if found else None

    def in_scope(self, word: str, scope: ChunkFilter, cap: int = SCOPE_COUNT_CAP) -> int:
        """Chunks (up to cap: 1 asks whether there is any) in scope that hold word, as the word index reads it."""
        return self.in_scope_each([word], scope, cap)[word]

    def in_scope_each(self, words: list[str], scope: ChunkFilter, cap: int = SCOPE_COUNT_CAP) -> dict[str, int]:
        """in_scope() of each word; those not kept are counted in one ask of the store."""
        version = self.token.current()
        with self._lock:
            if version != self._scope_version or len(self._in_scope) > 20_000:
                self._in_scope.clear()
                self._scope_version = version
            missing = [w for w in dict.fromkeys(words) if (w, scope, cap) not in self._in_scope]
            if missing:
                counted = self.store.terms.count_each(missing, cap, scope)
                self._in_scope.update(((w, scope, cap), counted[w]) for w in missing)
            return {w: self._in_scope[(w, scope, cap)] for w in words}

    def candidates(self, word: str, limit: int = CANDIDATES, scope: ChunkFilter | None = None) -> list[Candidate]:
        """Vocabulary stems a typo of word could have been meant as, closest and most frequent first
        (only those found in scope, counted there, when a scope is given)."""
        allowed = allowed_distance(word)
        # A number is never a typo of another ("1979" is no misspelt "1969").
        if allowed == 0 or len(word) > MAX_WORD_CHARS or not _TOKEN.fullmatch(word) or word.isdigit():
            return []
        target = self.fts_stem(word)
        if not target:
            return []
        # rapidfuzz loads here, when a word needs correcting: most searches never pay for it
        from rapidfuzz import process
        from rapidfuzz.distance import Levenshtein

        analyzer = self.store.analyzer
        edited = _stems_of(single_edits(word), analyzer)
        with self._lock:
            self._refresh()
            distance = self._nearest(target, allowed, process.extract, Levenshtein.distance)
            for stem in edited:
                if stem in self._docs:
                    distance[stem] = 1
            docs = {stem: self._docs.get(stem, 0) for stem in distance}
        ranked = sorted((d, -docs[stem], stem) for stem, d in distance.items() if stem != target)
        found = [
            Candidate(stem, d, -minus_docs, edited.get(stem) or _word_for(stem, analyzer))
            for d, minus_docs, stem in ranked
        ]
        if scope is None:
            return found[:limit]
        return self._within(found, scope, limit)

    def _within(self, found: list[Candidate], scope: ChunkFilter, limit: int) -> list[Candidate]:
        """The first `limit` candidates a search in scope can find, counted there."""
        kept: list[Candidate] = []
        for candidate in found:
            docs = self.in_scope(candidate.word, scope)
            if docs:
                kept.append(Candidate(candidate.stem, candidate.distance, docs, candidate.word))
                if len(kept) == limit:
                    break
        return sorted(kept, key=lambda c: (c.distance, -c.docs, c.stem))

    def held_chunks(self, stem: str) -> int | None:
        """Chunks holding an indexed stem, from the vocabulary when it is held as of the
        store's current version (else None: the caller reads the store).  At a million
        chunks the store reads a common word's whole posting list to count it (up to
        ~180 ms); the vocabulary a search corrects typos with already knows."""
        if self._version is None or self._version != self.token.current():
            return None
        return self._docs.get(stem, 0)

    def _refresh(self) -> None:
        version = self.token.current()
        if version == self._version:
            return
        # Reading the whole vocabulary takes ~0.3 s at 100k chunks.  While an indexer
        # commits every second, reloading for each half-typed word would add that to
        # every search; words indexed meanwhile join the suggestions within the interval.
        if self._version is not None and time.monotonic() - self._loaded_at < RELOAD_INTERVAL_SECONDS:
            return
        self._docs = self.store.terms.vocabulary()
        self._by_length = _by_length(self._docs)
        self._version = version
        self._loaded_at = time.monotonic()

    def _nearest(self, target: str, allowed: int, extract: Any, distance: Any) -> dict[str, int]:
        """The NEAREST vocabulary stems within `allowed` edits of target (closest first, then
        in vocabulary order).  Only stems whose length is within `allowed` of target's can
        be that near, so only their buckets are scanned: at a million chunks the whole
        vocabulary is half a million stems and scanning it took 40-50 ms a word."""
        found: list[tuple[int, int, str]] = []
        for length in range(len(target) - allowed, len(target) + allowed + 1):
            bucket = self._by_length.get(length)
            if bucket is None:
                continue
            near = extract(target, bucket.terms, scorer=distance, score_cutoff=allowed, limit=NEAREST)
            found.extend((int(d), bucket.positions[i], stem) for stem, d, i in near)
        return {stem: d for d, _, stem in sorted(found)[:NEAREST]}

    def fts_stem(self, word: str) -> str:
        """The term the word index makes of word ("" when it makes none)."""
        tokens = self.store.analyzer.tokens(word)
        return tokens[0] if tokens else ""

    def surface(self, stem: str, typed: str = "", word: str = "", scope: ChunkFilter | None = None) -> str:
        """stem as a word of the text (of chunks in scope): of its forms there, the one nearest what was typed."""
        forms: list[str] = []
        for text in self.store.terms.texts_with(word or _word_for(stem, self.store.analyzer), 3, scope):
            for m in _TOKEN.finditer(text):
                token = m.group(0).lower()
                if token not in forms and token.startswith(stem[:3]) and self.fts_stem(token) == stem:
                    forms.append(token)
        if not forms:
            return word or stem
        from rapidfuzz.distance import Levenshtein  # loaded on first correction (see candidates)

        return min(forms, key=lambda f: (Levenshtein.distance(f, typed.lower()), forms.index(f))) if typed else forms[0]


class _Terms(Record):
    """The vocabulary's stems of one length."""

    terms: list[str]  # vocabulary stems of one length, in vocabulary order
    # Each one's place in the whole vocabulary (ties keep that order); a machine-int
    # array: half a million Python ints would hold 20 MB at a million chunks.
    positions: array[int]


def _by_length(docs: dict[str, int]) -> dict[int, _Terms]:
    buckets: dict[int, _Terms] = {}
    for position, term in enumerate(docs):
        bucket = buckets.setdefault(len(term), _Terms([], array("q")))
        bucket.terms.append(term)
        bucket.positions.append(position)
    return buckets


def single_edits(word: str) -> set[str]:
    """Every string one typo away: a letter left out, doubled, swapped with the next,
    replaced or inserted (letters of a-z and of the word itself)."""
    word = word.lower()
    letters = set(_ASCII_LOWERCASE) | set(word)
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    out = {a + b[1:] for a, b in splits if b}
    out |= {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
    out |= {a + ch + b[1:] for a, b in splits if b for ch in letters}
    out |= {a + ch + b for a, b in splits for ch in letters}
    out.discard(word)
    return out


def _stems_of(words: set[str], analyzer: Analyzer) -> dict[str, str]:
    """stem → a word of words that the analyzer stems to it, for many single words at once."""
    plain = sorted(w for w in words if _TOKEN.fullmatch(w))
    stems = analyzer.tokenize(" ".join(plain)) if plain else ()
    if len(stems) != len(plain):  # a word the tokenizer split or dropped: one at a time
        stems = tuple((analyzer.tokens(w) or ("",))[0] for w in plain)
    out: dict[str, str] = {}
    for w, stem in zip(plain, stems):
        out.setdefault(stem, w)
    return out


_ENDINGS = ("", "e", "s", "y", "ed", "es", "ing", "ion", "al", "er", "ic", "ate", "ment")


def _word_for(stem: str, analyzer: Analyzer) -> str:
    """A word the analyzer stems to stem (the stem itself when nothing simple does)."""
    for ending in _ENDINGS:
        if analyzer.tokens(stem + ending) == (stem,):
            return stem + ending
    return stem
