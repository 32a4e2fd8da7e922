"""Chinese, Japanese and Korean text: which characters are CJK, and their bigrams.

These scripts write words without spaces between them, so the word index (unicode61)
reads a whole run of them as one token, and the substring index (trigrams) cannot find
a word of two characters, the commonest length of a Chinese word (召回, 向量).  Every
overlapping pair of characters of a CJK run is therefore indexed as well (storage's
bigram index), so a two-character word is found wherever it is written.
"""

from __future__ import annotations

from kenning.core.patterns import lazy_pattern

# Han (with its radicals, extensions A-F and compatibility forms), kana, Hangul (jamo and
# syllables), bopomofo, and the CJK symbols and full-width forms that sit between them.
_CJK_CHARS = (
    "\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029\u3040-\u30ff\u3100-\u312f\u3130-\u318f\u31a0-\u31ff"
    "\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f"
    "\U00020000-\U0003134f"
)
# A superset of those characters below the astral planes, as one range for a store's
# cheap first cut (SQLite's GLOB, PostgreSQL's regular expressions) before cjk_bigrams.
BMP_RANGE = "\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff"
FIRST = "\u2e80"  # no CJK character comes before it: text below it has none (no pattern compiled)
_RUN = lazy_pattern(f"[{_CJK_CHARS}]{{2,}}")
_ALL = lazy_pattern(f"[{_CJK_CHARS}]+")


def is_cjk(text: str) -> bool:
    """Whether every character of text is a CJK one (and there is at least one)."""
    return text != "" and min(text) >= FIRST and _ALL.fullmatch(text) is not None


def is_cjk_pair(term: str) -> bool:
    """A two-character CJK word: what the trigram index cannot find and the bigrams do."""
    return len(term) == 2 and is_cjk(term)


def cjk_bigrams(text: str) -> list[str]:
    """The distinct overlapping character pairs of text's CJK runs, in order of first use."""
    seen: dict[str, None] = {}
    if not text or max(text) < FIRST:
        return []
    for match in _RUN.finditer(text):
        run = match.group()
        for i in range(len(run) - 1):
            seen.setdefault(run[i : i + 2], None)
    return list(seen)
