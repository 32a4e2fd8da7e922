"""Parsing what the user typed into terms, phrases, exclusions and filters.

Any string parses: quotes may be unbalanced, operators and FTS5 syntax are just
words, and nothing the user types ever reaches SQL except as a bound parameter or a
double-quoted FTS5 string (storage.ftsquery).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import field

from kenning.core.patterns import lazy_pattern
from kenning.core.records import Record

# A question an assistant sends can be a few paragraphs (CISI's longest judged query
# is 334 words, 2,023 characters): bm25 ranks by all of its words, with their repeats.
MAX_QUERY_CHARS = 4000
MAX_TERMS = 32  # distinct words kept for highlighting, typo correction and the substring list
MAX_SEQUENCE = 512  # words, with repeats, that bm25 ranks by (was MAX_TERMS * 4)
FILTER_KEYS = ("source", "path", "ext", "tag", "after", "before")
# Word characters of any script; identifiers keep their inner dots/underscores/dashes.
_WORD = lazy_pattern(r"[^\W_]+(?:[._\-:/]+[^\W_]+)*|_+[^\W_]\w*", re.UNICODE)
_TOKEN = lazy_pattern(r'(-?)(\w+):("[^"]*"?|\S+)|(-?)"([^"]*)"?|(\S+)', re.UNICODE)

STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "our",
        "should",
        "so",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "must",
        "been",
        "being",
        "about",
        "over",
        "such",
        "any",
        "all",
        "some",
        "very",
        "may",
        "might",
    ]
)


class Filters(Record, frozen=True):
    """The filters a query names (source:, path:, ext:, tag:, dates)."""

    sources: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    exts: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    after: float | None = None
    before: float | None = None

    @property
    def include_tests(self) -> bool:
        return "test" in self.tags

    def is_empty(self) -> bool:
        return not (self.sources or self.paths or self.exts or self.tags) and (
            self.after is None and self.before is None
        )


class ParsedQuery(Record, frozen=True):
    """A query split into its words, phrases and filters."""

    text: str
    terms: tuple[str, ...] = ()  # lowercased words, in order, phrases' words included
    # Quoted words, each group required side by side (a single quoted word is required too).
    phrases: tuple[tuple[str, ...], ...] = ()
    # Phrases searched as words only: no chunk the filters allow contains them (the
    # engine finds that out and says so, search.phrases); they still score where found.
    relaxed: tuple[tuple[str, ...], ...] = ()
    excluded: tuple[str, ...] = ()
    filters: Filters = field(default_factory=Filters)
    problems: tuple[str, ...] = ()  # filters that could not be understood, said to the user
    # Every word as often as the query says it (terms holds each once): bm25 weighs a
    # word the query repeats by its repeats (Okapi's query-term frequency).
    term_sequence: tuple[str, ...] = ()
    # What was typed, without filters, excluded words and quote marks: the question as
    # the person wrote it (sentences, punctuation and case kept) for the model to read.
    typed: str = ""

    @property
    def content_terms(self) -> tuple[str, ...]:
        """Terms without stopwords, unless stopwords are all there is."""
        kept = tuple(t for t in self.terms if t not in STOPWORDS)
        return kept or self.terms

    @property
    def weighted_terms(self) -> tuple[str, ...]:
        """content_terms with their repeats, in query order."""
        content = set(self.content_terms)
        return tuple(t for t in self.term_sequence if t in content) or self.content_terms

    @property
    def ranking_terms(self) -> tuple[str, ...]:
        """Every word of two or more characters, with its repeats, in query order (what
        bm25 ranks by); the content terms when there is none."""
        return tuple(t for t in self.term_sequence if len(t) > 1) or self.weighted_terms

    @property
    def required_phrases(self) -> tuple[tuple[str, ...], ...]:
        """The phrases every hit must contain."""
        return tuple(p for p in self.phrases if p not in self.relaxed)

    @property
    def is_empty(self) -> bool:
        return not self.terms

    @property
    def filters_only(self) -> bool:
        """No words to rank by, but something to select documents by."""
        return not self.terms and (not self.filters.is_empty() or bool(self.excluded))

    @property
    def text_for_embedding(self) -> str:
        """The words the user searched for, without filters or excluded words."""
        return " ".join(self.terms)

    def embedding_text(self, form: str) -> str:
        """What the model embeds for the query (SearchOptions.query_text): "typed", the
        question as written; "words", its words with their repeats, lower-cased and
        without punctuation; "words32", text_for_embedding (its distinct words, at most
        MAX_TERMS)."""
        if form == "typed":
            return self.typed or self.text_for_embedding
        if form == "words":
            return " ".join(self.term_sequence) or self.text_for_embedding
        return self.text_for_embedding


# Prefixes English writes with a hyphen that are no words on their own: "pre-school" is
# one word, "fuzzy-set-theoretic" three.  (One-letter ones, "a-" as in "a-priori", need
# no entry: compound_words keeps any term with a one-letter part whole.)
BOUND_PREFIXES = frozenset(
    [
        "anti",
        "auto",
        "bi",
        "co",
        "counter",
        "de",
        "dis",
        "ex",
        "extra",
        "hyper",
        "inter",
        "intra",
        "macro",
        "micro",
        "mid",
        "mini",
        "mis",
        "multi",
        "non",
        "over",
        "post",
        "pre",
        "pro",
        "pseudo",
        "quasi",
        "re",
        "semi",
        "sub",
        "super",
        "trans",
        "tri",
        "ultra",
        "un",
        "under",
    ]
)
_COMPOUND_JOINS = lazy_pattern(r"[-/]+")


def compound_words(term: str) -> tuple[str, ...]:
    """The words a compound joined by hyphens, dashes or slashes is made of, as bm25 reads
    them ("fuzzy-set-theoretic", "zero/one", "conditions--that"), a bound prefix kept
    with the word it prefixes ("non-steady-state" → "non-steady", "state").  An
    identifier, a path or an abbreviation (a dot, colon or underscore; a single letter:
    "x-ray", "e-mail", "a/b") stays one term, read as a phrase."""
    if not _COMPOUND_JOINS.search(term) or any(ch in term for ch in "._:"):
        return (term,)
    parts = [p for p in _COMPOUND_JOINS.split(term) if p]
    if len(parts) < 2 or any(len(p) == 1 for p in parts):
        return (term,)
    out: list[str] = []
    i = 0
    while i < len(parts):
        if parts[i] in BOUND_PREFIXES and i + 1 < len(parts):
            out.append(f"{parts[i]}-{parts[i + 1]}")
            i += 2
        else:
            out.append(parts[i])
            i += 1
    return tuple(out)


def words(text: str) -> list[str]:
    """Lowercased words, identifiers kept whole (snake_case, dotted.names, kebab-case)."""
    text = unicodedata.normalize("NFKC", text)
    return [m.group(0).lower() for m in _WORD.finditer(text)]


def parse_query(text: str) -> ParsedQuery:
    problems: list[str] = []
    if len(text or "") > MAX_QUERY_CHARS:
        problems.append(f"the query was cut to its first {MAX_QUERY_CHARS} characters (it had {len(text)})")
    text = _clean(text)
    terms: list[str] = []
    phrases: list[tuple[str, ...]] = []
    excluded: list[str] = []
    collected: dict[str, list[str]] = {k: [] for k in FILTER_KEYS}
    typed: list[str] = []
    for m in _TOKEN.finditer(text):
        neg_f, key, value, neg_p, phrase, bare = m.groups()
        if key is not None and key.lower() in FILTER_KEYS and not neg_f:
            collected[key.lower()].append(value.strip('"'))
        elif phrase is not None or (key is not None and value.startswith('"')):
            inner = phrase if phrase is not None else m.group(0).replace('"', " ")
            _add_phrase(words(inner), bool(neg_p), terms, phrases, excluded)
            if not neg_p:
                typed.append(inner.strip())
        else:
            token = m.group(0)
            found = words(token)
            if token.startswith("-") and len(token) > 1 and found:
                excluded.extend(found)
            else:
                terms.extend(found)
                typed.append(token)
    filters = _filters(collected, problems)
    return ParsedQuery(
        text=text,
        terms=tuple(_dedupe(terms))[:MAX_TERMS],
        phrases=tuple(phrases[:8]),
        excluded=tuple(_dedupe(excluded))[:MAX_TERMS],
        filters=filters,
        problems=tuple(problems),
        term_sequence=tuple(terms[:MAX_SEQUENCE]),
        typed=" ".join(t for t in typed if t),
    )


def _clean(text: str) -> str:
    text = text or ""
    text = "".join(ch if ch.isprintable() else " " for ch in text[:MAX_QUERY_CHARS])
    return text.strip()


def _add_phrase(
    found: list[str],
    negated: bool,
    terms: list[str],
    phrases: list[tuple[str, ...]],
    excluded: list[str],
) -> None:
    if not found:
        return
    if negated:
        excluded.extend(found)
        return
    terms.extend(found)
    phrases.append(tuple(found))


def _dedupe(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _filters(collected: dict[str, list[str]], problems: list[str]) -> Filters:
    return Filters(
        sources=tuple(collected["source"]),
        paths=tuple(collected["path"]),
        exts=tuple(e.lower().lstrip(".") for e in collected["ext"]),
        tags=tuple(t.lower().lstrip("#") for t in collected["tag"]),
        after=_date(collected["after"], problems, "after"),
        before=_date(collected["before"], problems, "before", end_of_day=True),
    )


def _date(values: list[str], problems: list[str], key: str, end_of_day: bool = False) -> float | None:
    if not values:
        return None
    from datetime import datetime, timezone  # a query with a date filter is the only one that needs it

    value = values[-1]
    for fmt in ("%Y-%m-%d", "%Y-%m", "%Y"):
        try:
            parsed = datetime.strptime(value, fmt).replace(tzinfo=timezone.utc)
        except ValueError:
            continue
        stamp = parsed.timestamp()
        return stamp + 86399.999 if end_of_day and fmt == "%Y-%m-%d" else stamp
    problems.append(f"{key}:{value} is not a date (use YYYY-MM-DD)")
    return None
