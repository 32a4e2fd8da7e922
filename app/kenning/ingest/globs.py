"""Glob patterns (the user's include/exclude globs and .gitignore files): checked before
they are obeyed.

Patterns are matched by pathspec, which turns each one into a regular expression that
backtracks: a pattern with many `*` in one path part (`*a*a*a*a*b`) takes minutes on
one long name (see core.globcost).  Such a pattern, one that does not parse (`[z-a]`, `!`),
and an ignore file too big to be one are refused with a reason instead: on input for
the user's globs, reported and skipped when found in a .gitignore or an older store.
"""

from __future__ import annotations

import re
from typing import Any

import pathspec

from kenning.core.globcost import costly_pattern

MAX_IGNORE_FILE_BYTES = 1 << 20
MAX_IGNORE_PATTERNS = 10_000


def pattern_problem(pattern: str) -> str | None:
    """Why `pattern` cannot be obeyed, or None when it is fine."""
    costly = costly_pattern(pattern)
    if costly:
        return costly
    try:
        pathspec.GitIgnoreSpec.from_lines([pattern])
    except (ValueError, TypeError, re.error) as exc:
        return str(exc) or type(exc).__name__
    return None


def compile_patterns(lines: list[str] | tuple[str, ...]) -> tuple[pathspec.PathSpec[Any] | None, list[str]]:
    """The spec of the usable patterns, and one problem text per refused one.

    Blank lines and comments are kept (they keep line numbers meaningful and are
    ignored by pathspec).
    """
    kept: list[str] = []
    problems: list[str] = []
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        if len(kept) >= MAX_IGNORE_PATTERNS:
            problems.append(f"more than {MAX_IGNORE_PATTERNS} patterns: the rest are not obeyed")
            break
        problem = pattern_problem(line)
        if problem:
            problems.append(f"line {number}: {line[:80]!r} not obeyed: {problem}")
        else:
            kept.append(line)
    return (pathspec.GitIgnoreSpec.from_lines(kept) if kept else None), problems
