"""The word index's stemmer lives in storage (storage.stemming): it is the index's own."""

from kenning.storage.stemming import porter_stems, porter_tokens, tokenize

__all__ = ["porter_stems", "porter_tokens", "tokenize"]
