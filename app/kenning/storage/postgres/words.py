"""What the PostgreSQL backend stores of a chunk's words, and the queries over them.

The stemmer.  This backend tokenizes in Kenning's process with the same tokenizer as
the SQLite word index (FTS5 `porter unicode61`, storage.stemming) and stores the terms
it gives: the stored `tsvector` holds exactly the terms retrieval, typo correction,
feedback, proximity and highlighting count, so the two backends rank alike and each
backend's highlighting agrees with its own retrieval (docs/architecture.md §8).
PostgreSQL's own `english` configuration would stem with Snowball, drop stop words
and read e-mail addresses, paths and hyphenated words as tokens of their own: the
same query would find other chunks in a team store than in a personal one, and
bm25's lengths would differ.

A chunk is stored as:
- `words`: a tsvector of its terms with positions (the indexed title first, weight A,
  then the text, weight D, one position apart, so a phrase never spans the two); GIN
  indexes it: it finds the chunks a term or a phrase (`<->`) occurs in;
- `tf`: jsonb {term: occurrences in the title << 16 | occurrences in the text}, what
  bm25 reads: one key lookup a term, stored uncompressed (schema.py m002: each lookup
  in a compressed value decompressed it again); a chunk whose counts take more than
  TF_INLINE_BYTES keeps them in `tf_big` instead (then `tf` is empty);
- `word_count`: the row's tokens, title and text (bm25's document length, as FTS5);
- `grams`: the distinct trigrams of the lower-cased title and text, and the pairs of
  characters of their Chinese, Japanese and Korean runs (core/cjk.py: a two-character
  word, which no trigram holds, as the SQLite store's chunks_cjk), GIN-indexed, what
  finds a substring's candidate rows when the server has no pg_trgm; `gram_count`:
  the row's trigram tokens (the substring list's bm25 length; the pairs do not count).

Everything reaches the server as a parameter: a lexeme is quoted in the tsvector and
tsquery literals (a quote or backslash in it doubled), and terms longer than a
tsvector lexeme may be (2046 bytes) are left out of `words` (they still count in the
length, as FTS5 counts them).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from kenning.core.cjk import cjk_bigrams
from kenning.core.records import Record
from kenning.storage import stemming

MAX_LEXEME_BYTES = 2046  # PostgreSQL's limit for one tsvector lexeme
MAX_POSITION = 16383  # larger positions are stored as this one
GRAM = 3


def indexed_title(title: str, doc_words: str) -> str:
    """The title both word indexes see: the chunk's title, then its document's words
    (front-matter title and tags), as the SQLite backend's chunks_indexed view."""
    return title if not doc_words else f"{title}\n{doc_words}"


def _quoted(lexeme: str) -> str:
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def _fits(term: str) -> bool:
    # A term of up to a quarter of the limit in characters fits whatever they are (UTF-8: <= 4 bytes each).
    return 0 < len(term) <= MAX_LEXEME_BYTES // 4 or 0 < len(term.encode("utf-8")) <= MAX_LEXEME_BYTES


class ChunkWords(Record, frozen=True):
    """The stored word columns of one chunk."""

    words: str  # tsvector literal
    tf: str  # jsonb
    tf_big: str | None  # jsonb, when tf would be too large to keep in the row
    word_count: int
    grams: list[str]
    gram_count: int
    terms: frozenset[str]  # distinct terms (the document frequency's keys)


class Words:
    """The backend's tokenizer (bound to its Store instance): FTS5 porter unicode61."""

    name = "porter unicode61"

    def tokenize(self, text: str) -> tuple[str, ...]:
        return stemming.tokenize(text)

    def tokens(self, word: str) -> tuple[str, ...]:
        return stemming.porter_tokens(word)

    def stems(self, words: Iterable[str]) -> Mapping[str, tuple[str, ...]]:
        return stemming.porter_stems(words)

    def known(self) -> Mapping[str, tuple[str, ...]]:
        return stemming.known_stems()

    def chunk_words(self, title: str, text: str) -> ChunkWords:
        title_terms = self.tokenize(title)
        text_terms = self.tokenize(text)
        positions: dict[str, list[str]] = {}
        for at, term in enumerate(title_terms, 1):
            positions.setdefault(term, []).append(f"{min(at, MAX_POSITION)}A")
        start = len(title_terms) + 2  # a gap: no phrase spans the title and the text
        for at, term in enumerate(text_terms, start):
            positions.setdefault(term, []).append(str(min(at, MAX_POSITION)))
        tf, tf_big = _frequencies(title_terms, text_terms)
        literal = " ".join(f"{_quoted(t)}:{','.join(p)}" for t, p in positions.items() if _fits(t))
        low_title, low_text = title.lower(), text.lower()
        return ChunkWords(
            words=literal,
            tf=tf,
            tf_big=tf_big,
            word_count=len(title_terms) + len(text_terms),
            grams=row_grams(low_title, low_text),
            gram_count=gram_tokens(low_title) + gram_tokens(low_text),
            terms=frozenset(t for t in positions if _fits(t)),
        )


def _frequencies(title_terms: Sequence[str], text_terms: Sequence[str]) -> tuple[str, str | None]:
    """The tf and tf_big columns: both counts of each term in one number."""
    from kenning.storage.postgres.schema import TF_INLINE_BYTES, TF_SHIFT

    counts = Counter(text_terms)
    for term in title_terms:
        counts[term] += 1 << TF_SHIFT
    encoded = json.dumps({t: n for t, n in counts.items() if _fits(t)}, ensure_ascii=False)
    if len(encoded.encode("utf-8")) > TF_INLINE_BYTES:
        return "{}", encoded
    return encoded, None


def trigrams(text: str) -> list[str]:
    """Every 3-character window of text (the FTS5 trigram tokenizer's tokens)."""
    return [text[i : i + GRAM] for i in range(len(text) - GRAM + 1)]


def row_grams(low_title: str, low_text: str) -> list[str]:
    """A row's `grams`: its distinct trigrams and CJK character pairs (the pairs of the
    SQLite store's chunks_cjk: title and text apart, so no pair spans them)."""
    grams = {low_title[i : i + GRAM] for i in range(len(low_title) - GRAM + 1)}
    grams |= {low_text[i : i + GRAM] for i in range(len(low_text) - GRAM + 1)}
    grams.update(cjk_bigrams(f"{low_title}\n{low_text}"))
    return sorted(grams)


def gram_tokens(text: str) -> int:
    return max(len(text) - GRAM + 1, 0)


def phrase_query(tokens: Sequence[str]) -> str:
    """A tsquery literal: the tokens side by side (one token: that token)."""
    return " <-> ".join(_quoted(t) for t in tokens if _fits(t))


def any_query(phrases: Iterable[Sequence[str]]) -> str:
    """A tsquery literal matching chunks holding any of the phrases (each: tokens side by side)."""
    parts = [phrase_query(p) for p in phrases]
    return " | ".join(f"({p})" for p in parts if p)


def all_query(phrases: Iterable[Sequence[str]]) -> str:
    parts = [phrase_query(p) for p in phrases]
    return " & ".join(f"({p})" for p in parts if p)
