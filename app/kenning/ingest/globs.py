"""Glob patterns (the user's include/exclude globs and .gitignore files): checked before
they are obeyed.

Patterns are gitignore lines matched by core.wildmatch, whose time is linear in the
pattern and the path whatever the pattern (no backtracking regular expression is ever
built from one).  A pattern that cannot be obeyed (`[z-a]`, a lone `!`, one longer than
wildmatch.MAX_PATTERN_CHARS) and an ignore file too big to be one are refused with a
reason instead: on input for the user's globs, reported and skipped when found in a
.gitignore or an older store.
"""

from __future__ import annotations

from kenning.core.wildmatch import MAX_PATTERNS, PatternError, PatternList, compile_lines, compile_pattern

MAX_IGNORE_FILE_BYTES = 1 << 20
MAX_IGNORE_PATTERNS = MAX_PATTERNS

__all__ = ["MAX_IGNORE_FILE_BYTES", "PatternList", "compile_patterns", "pattern_problem"]


def pattern_problem(pattern: str) -> str | None:
    """Why `pattern` cannot be obeyed, or None when it is fine."""
    try:
        compile_pattern(pattern)
    except PatternError as exc:
        return str(exc)
    return None


def compile_patterns(lines: list[str] | tuple[str, ...]) -> tuple[PatternList | None, list[str]]:
    """The usable patterns (None when there is none), and one problem text per refused one."""
    return compile_lines(lines)
