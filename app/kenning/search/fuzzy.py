"""Typo correction against the index's own vocabulary (fts5vocab over the porter table).

A word is unknown when FTS5 itself (same tokenizer, same stemmer) finds it nowhere.
Its FTS5 stem is compared with the vocabulary's stems by edit distance (allowed
distance grows with word length); among the closest, the most frequent wins, since
ties are common.  The chosen stem is shown as a real word taken from the text.
"""

from __future__ import annotations

import re
import threading
import time

from kenning.storage import lexical
from kenning.storage.connection import Store
from kenning.storage.stemming import porter_tokens

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
RELOAD_INTERVAL_SECONDS = 10.0


def allowed_distance(word: str) -> int:
    if len(word) <= 3:
        return 0
    if len(word) <= 5:
        return 1
    if len(word) <= 9:
        return 2
    return 3


class Vocabulary:
    def __init__(self, store: Store) -> None:
        self.store = store
        self._lock = threading.RLock()
        self._terms: list[str] = []
        self._docs: dict[str, int] = {}
        self._version: object = None
        self._loaded_at = 0.0

    def correct(self, word: str) -> str | None:
        """The closest frequent vocabulary word, shown as it appears in the text."""
        limit = allowed_distance(word)
        if limit == 0 or not _TOKEN.fullmatch(word):
            return None
        target = self.fts_stem(word)
        if not target:
            return None
        # rapidfuzz loads here, when a word needs correcting: most searches never pay for it
        from rapidfuzz import process
        from rapidfuzz.distance import Levenshtein

        with self._lock:
            self._refresh()
            matches = process.extract(target, self._terms, scorer=Levenshtein.distance, score_cutoff=limit, limit=50)
            if not matches:
                return None
            best = min(matches, key=lambda m: (m[1], -self._docs.get(m[0], 0), m[0]))
        return self._surface_word(best[0]) or best[0]

    def _refresh(self) -> None:
        version = self.store.version()
        if version == self._version:
            return
        # Reading the whole vocabulary takes ~0.3 s at 100k chunks.  While an indexer
        # commits every second, reloading for each half-typed word would add that to
        # every search; words indexed meanwhile join the suggestions within the interval.
        if self._version is not None and time.monotonic() - self._loaded_at < RELOAD_INTERVAL_SECONDS:
            return
        self._docs = lexical.vocabulary(self.store)
        self._terms = list(self._docs)
        self._version = version
        self._loaded_at = time.monotonic()

    def fts_stem(self, word: str) -> str:
        """The term FTS5's porter tokenizer makes of word ("" when it makes none)."""
        tokens = porter_tokens(word)
        return tokens[0] if tokens else ""

    def _surface_word(self, stem: str) -> str | None:
        for text in lexical.texts_with_term(self.store, stem, 3):
            seen: set[str] = set()
            for m in _TOKEN.finditer(text):
                token = m.group(0).lower()
                if token in seen or not token.startswith(stem[:3]):
                    continue
                seen.add(token)
                if self.fts_stem(token) == stem:
                    return token
        return None
