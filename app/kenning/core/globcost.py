"""Patterns whose matching could take minutes (standard library only, so gitinfo can
check a repository's .gitignore files before git reads them).

Both Python's regular expressions (behind pathspec) and git 2.39's wildmatch backtrack:
a pattern with many `*` in one path part (`*a*a*a*a*b`) takes time growing like the
name length to the power of its stars.  Measured with pathspec on a 250-character
name: 3 stars in one part 0.02 s, 4 stars 1.2 s, 5 stars 50 s; git ls-files with 8
stars over a 200-character name: more than a minute.
"""

from __future__ import annotations

import re

MAX_STARS_PER_PART = 3
MAX_DOUBLE_STARS = 2  # `**` parts; each one can span the whole path
MAX_PATTERN_CHARS = 1024

_STAR_RUN = re.compile(r"(?<!\\)\*+")


def costly_pattern(pattern: str) -> str | None:
    """Why matching `pattern` could take minutes, or None."""
    if len(pattern) > MAX_PATTERN_CHARS:
        return f"longer than {MAX_PATTERN_CHARS} characters"
    parts = pattern.strip().lstrip("!").split("/")
    if sum(1 for p in parts if p == "**") > MAX_DOUBLE_STARS:
        return f"more than {MAX_DOUBLE_STARS} '**' parts (matching it could take minutes)"
    if any(len(_STAR_RUN.findall(p)) > MAX_STARS_PER_PART for p in parts if p != "**"):
        return f"more than {MAX_STARS_PER_PART} '*' in one part of the path (matching it could take minutes)"
    return None


def costly_lines(text: str) -> list[str]:
    """One problem text per costly pattern line of an ignore file."""
    problems = []
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            why = costly_pattern(line)
            if why:
                problems.append(f"line {number}: {line[:80]!r} not obeyed: {why}")
    return problems
