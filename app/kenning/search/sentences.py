"""The meaning of a question written as several sentences (issue #28 round fifteen).

The model reads a long question in one pass and weighs its sentences as its attention
falls, so a sentence of filler ("Give definitions where possible.") or a long aside can
pull the query vector off the need.  Such a question is read twice: whole, and sentence
by sentence, each sentence weighted by its content words.  The query vector is the sum of
the two unit vectors, normalised: a chunk's cosine to it is, up to one factor for the
query, the sum of its cosines to the two readings, so the vector list is CombSUM (Fox and
Shaw 1994) of two representations of one need, as Belkin et al. (1995) combined query
formulations.  A query of one sentence (every keyword search) is embedded as before.

Vector mode only: measured on the five collections (docs/architecture.md §6, round
fifteen) the meaning list gains on each, and hybrid, whose keyword lists already read
every sentence's words, lost MED (-0.0073 nDCG@10) and gained the others 0.0004-0.0015.
"""

from __future__ import annotations

from collections.abc import Callable

from kenning import TYPE_CHECKING
from kenning.core.patterns import lazy_pattern
from kenning.search.query import STOPWORDS
from kenning.search.textmatch import TOKEN

if TYPE_CHECKING:
    import numpy as np

# A sentence ends at . ? ! or ; followed by white space ("setup.py" or "v1.2" does not end one).
_SENTENCE_END = lazy_pattern(r"(?<=[.?!;])\s+")
MAX_SENTENCES = 8  # a pasted page is read whole and in its first sentences, not embedded 40 times
MODES = ("vector",)


def sentences(text: str) -> list[str]:
    """The sentences of text that hold a content word, in order (at most MAX_SENTENCES)."""
    parts = (p.strip() for p in _SENTENCE_END.split(text.strip()))
    return [p for p in parts if content_words(p)][:MAX_SENTENCES]


def read_in(text: str) -> int:
    """How many sentences query_vector reads text in besides whole (0: whole only)."""
    count = len(sentences(text))
    return count if count >= 2 else 0


def content_words(sentence: str) -> int:
    """How many of the sentence's words are not stop words (its weight in the reading)."""
    return sum(1 for w in TOKEN.findall(sentence.lower()) if w not in STOPWORDS)


def query_vector(embed: Callable[[str], np.ndarray], text: str) -> np.ndarray:
    """The query vector of text: embed(text), or for two sentences or more the normalised
    sum of it and the content-word-weighted mean of the sentences' vectors."""
    whole = embed(text)
    parts = sentences(text)
    if len(parts) < 2:
        return whole
    import numpy as np

    weights = np.array([content_words(p) for p in parts], dtype=np.float64)
    each = np.array([embed(p) for p in parts], dtype=np.float64)
    read = _unit(weights @ each)
    combined = _unit(_unit(whole.astype(np.float64)) + read)
    return combined.astype(whole.dtype)


def _unit(vector: np.ndarray) -> np.ndarray:
    import numpy as np

    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector
