"""Gitignore-style patterns matched in time linear in the pattern and the path, by
construction (standard library only: gitinfo decides ignored files with it too).

Both Python's regular expressions and git's own wildmatch backtrack: a pattern with
stars spread over several parts (`*a*a*/*a*a*/…/z`) multiplies the ways each part can
match, and took hours against six nested folders of twenty `a`s.  Here nothing
backtracks:

- a pattern is cut into its `/`-separated parts, and a path into its names; `**` parts
  are matched part by part over a set of reachable positions (each (pattern part,
  path name) pair is tried at most once);
- one part is cut at its stars into fixed-length pieces (literals, `?`, `[…]`): the
  first must start the name, the last must end it, and each middle piece is searched
  leftmost after the one before.  Pieces have a fixed length, so the leftmost place is
  always the best one and no earlier choice is ever revisited.

Semantics are git's (gitignore(5)): `!` negates, a trailing `/` matches folders only, a
pattern without a `/` before its end matches a name at any depth, `**/`, `/**/` and
`/**` span folders, other runs of stars are single stars, `?` and `[…]` never match
`/`, a backslash escapes the next character.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import field

from kenning.core.records import Record

MAX_PATTERN_CHARS = 1024
MAX_PATTERNS = 10_000

# Bracket classes git's wildmatch knows ([:alpha:] ...), as Python class bodies (ASCII,
# as in the C locale git runs in).
_POSIX_CLASSES = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "blank": " \\t",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@\\[-`{-~",
    "space": " \\t\\n\\r\\f\\v",
    "upper": "A-Z",
    "xdigit": "0-9A-Fa-f",
}


class PatternError(ValueError):
    """A pattern that cannot be obeyed; the message says why."""


class _Part:
    """One `/`-free part of a pattern, matched against one name."""

    __slots__ = ("last_width", "pieces", "whole")

    def __init__(self, pieces: list[str], last_width: int, stars: bool) -> None:
        # pieces: regular expressions of fixed length (no quantifier): the text between stars.
        self.last_width = last_width
        self.whole: re.Pattern[str] | None = None if stars else re.compile(pieces[0], re.DOTALL)
        self.pieces: list[re.Pattern[str]] = [re.compile(p, re.DOTALL) for p in pieces] if stars else []

    def matches(self, name: str) -> bool:
        if self.whole is not None:
            return self.whole.fullmatch(name) is not None
        first, *middle, last = self.pieces
        start = first.match(name)
        if start is None:
            return False
        pos = start.end()
        for piece in middle:
            found = piece.search(name, pos)
            if found is None:
                return False
            pos = found.end()
        # The last piece is fixed-length: it can only sit at the very end.
        width = self.last_width
        return len(name) - width >= pos and last.fullmatch(name, len(name) - width) is not None


_ANY_DIRS = "**"  # a part spanning zero or more names
_ONE_OR_MORE = "**+"  # a trailing `/**`: one or more names


class Pattern(Record, frozen=True):
    """One gitignore line, compiled."""

    text: str
    negated: bool
    dir_only: bool
    parts: tuple[object, ...]  # _Part, _ANY_DIRS or _ONE_OR_MORE; () when `chars` is used
    chars: _CharProgram | None = None  # a pattern whose `**` sits inside a part
    anywhere: _Part | None = field(default=None, init=False, compare=False)

    def matches(self, names: Sequence[str], is_dir: bool) -> bool:
        """Whether the pattern matches this path itself (names relative to the pattern's folder)."""
        if self.dir_only and not is_dir:
            return False
        if self.anywhere is not None:
            return self.anywhere.matches(names[-1]) if names else False
        return len(names) in self._accepting(names)

    def __post_init__(self) -> None:
        # A pattern that is one name at any depth (`*.log`, `build/`) is checked against
        # the last name alone: most lines of most ignore files.
        parts = self.parts
        single = parts[1] if len(parts) == 2 and parts[0] is _ANY_DIRS else None
        object.__setattr__(self, "anywhere", single if isinstance(single, _Part) else None)

    def matches_path_or_parent(self, names: Sequence[str], is_dir: bool = False) -> bool:
        """Whether the pattern matches the path or one of the folders holding it (what an
        exclude glob applied to a file's path means)."""
        accepting = self._accepting(names)
        if any(0 < k < len(names) for k in accepting):
            return True
        return len(names) in accepting and (is_dir or not self.dir_only)

    def _accepting(self, names: Sequence[str]) -> set[int]:
        """The k for which the pattern matches the first k names."""
        if self.chars is not None:
            return self.chars.accepting(names)
        parts = self.parts
        part = self.anywhere  # most lines of most ignore files: one check per name
        if part is not None:
            return {k for k, name in enumerate(names, 1) if part.matches(name)}
        final = len(parts)
        current = _closure({0}, parts)
        out = set()
        for k, name in enumerate(names, 1):
            step: set[int] = set()
            for i in current:
                if i >= final:
                    continue
                item = parts[i]
                if item is _ANY_DIRS:
                    step.add(i)
                elif item is _ONE_OR_MORE:
                    step.update((i, i + 1))
                elif isinstance(item, _Part) and item.matches(name):
                    step.add(i + 1)
            current = _closure(step, parts)
            if not current:
                break
            if final in current:
                out.add(k)
        return out


class _CharProgram:
    """A pattern matched character by character over the whole path, by simulating its
    automaton (a set of positions, each character read once): for the rare pattern whose
    `**` sits inside a part (`a**/b`), which git lets span folders."""

    def __init__(self, tokens: list[tuple[str, object]]) -> None:
        # ("one", a one-character class) | ("lit", a character) | ("star", crosses "/") |
        # ("dirs", None) + ("dirs-loop", None): "(.*/)?", entered or skipped at "dirs"
        self.tokens = tokens

    def accepting(self, names: Sequence[str]) -> set[int]:
        text = "/".join(names)
        final = len(self.tokens)
        current = self._closure({0})
        out: set[int] = set()
        k = 0
        for ch in text:
            if ch == "/":
                k += 1
                if final in current:
                    out.add(k)
            step: set[int] = set()
            for i in current:
                if i >= final:
                    continue
                kind, arg = self.tokens[i]
                if kind == "one":
                    if ch != "/" and isinstance(arg, re.Pattern) and arg.fullmatch(ch):
                        step.add(i + 1)
                elif kind == "lit":
                    if ch == arg:
                        step.add(i + 1)
                elif kind == "star":
                    if arg or ch != "/":
                        step.add(i)
                elif kind == "dirs-loop":  # the ".*/" of "(.*/)?": left only just after a "/"
                    step.add(i)
                    if ch == "/":
                        step.add(i + 1)
            current = self._closure(step)
            if not current:
                return out
        if final in current:
            out.add(len(names))
        return out

    def _closure(self, states: set[int]) -> set[int]:
        out = set(states)
        todo = list(states)
        while todo:
            i = todo.pop()
            kind = self.tokens[i][0] if i < len(self.tokens) else ""
            # a star may match nothing; "(.*/)?" may be skipped (i + 2) or entered (i + 1)
            following = (i + 1,) if kind == "star" else (i + 1, i + 2) if kind == "dirs" else ()
            for j in following:
                if j not in out:
                    out.add(j)
                    todo.append(j)
        return out


def _closure(states: set[int], parts: tuple[object, ...]) -> set[int]:
    """Add the positions a `**` lets the match skip to without consuming a name."""
    out = set(states)
    for i in sorted(states):
        while i < len(parts) and parts[i] is _ANY_DIRS:
            i += 1
            out.add(i)
    return out


def compile_pattern(line: str) -> Pattern | None:
    """The compiled pattern of a gitignore line; None for a blank line or a comment.
    PatternError when it cannot be obeyed."""
    if len(line) > MAX_PATTERN_CHARS:
        raise PatternError(f"longer than {MAX_PATTERN_CHARS} characters")
    text = _strip_trailing_spaces(line.rstrip("\r\n"))
    if not text or text.startswith("#"):
        return None
    negated = text.startswith("!")
    if negated:
        text = text[1:]
        if not text:
            raise PatternError("'!' alone negates nothing")
    if text.endswith("\\") and not text.endswith("\\\\"):
        raise PatternError("ends with a lone backslash")
    dir_only = text.endswith("/") and not text.endswith("\\/")
    body = text.rstrip("/") if dir_only else text
    if not body:
        raise PatternError("'/' alone matches nothing")
    anchored = "/" in body  # a slash at the start or in the middle (the end's was taken off)
    raw_parts = body.lstrip("/").split("/") if anchored else [body]
    if any(p == "" for p in raw_parts):
        raw_parts = [p for p in raw_parts if p != ""]  # `a//b` is `a/b`, as for git
    if anchored and _spanning_star(body.lstrip("/")):
        return Pattern(line, negated, dir_only, (), _char_program(body.lstrip("/")))
    parts: list[object] = [] if anchored else [_ANY_DIRS]
    for index, raw in enumerate(raw_parts):
        if len(raw) >= 2 and raw.strip("*") == "":  # `***` spans folders as `**` does
            last = index == len(raw_parts) - 1
            if last and len(raw_parts) > 1:
                parts.append(_ONE_OR_MORE)
            elif not parts or parts[-1] is not _ANY_DIRS:
                parts.append(_ANY_DIRS)
            continue
        parts.append(_compile_part(raw))
    return Pattern(line, negated, dir_only, tuple(parts))


def _strip_trailing_spaces(text: str) -> str:
    """Trailing spaces are ignored unless escaped with a backslash (gitignore(5))."""
    while text.endswith(" ") and not text.endswith("\\ "):
        text = text[:-1]
    return text


def _spanning_star(body: str) -> bool:
    """Whether git lets a `**` inside a part span folders here: git compares the pattern's
    literal start first and runs wildmatch on the rest, where a `**` that opens the rest
    and is followed by "/" or the end counts as a folder-spanning one (`a**/b` matches
    `ab/x/b`; `x/**a` is a plain star)."""
    first = next((i for i, ch in enumerate(body) if ch in "*?[\\"), None)
    if first is None or first == 0 or body[first - 1] == "/" or not body.startswith("**", first):
        return False
    end = first + len(body[first:]) - len(body[first:].lstrip("*"))
    return end == len(body) or body[end] == "/"


def _char_program(body: str) -> _CharProgram:
    """The automaton of an anchored pattern (leading "/" removed), under git's rules."""
    first_wild = next((i for i, ch in enumerate(body) if ch in "*?[\\"), len(body))
    tokens: list[tuple[str, object]] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "*":
            run = len(body[i:]) - len(body[i:].lstrip("*"))
            opens = i == 0 or body[i - 1] == "/" or i == first_wild
            closes = i + run == len(body) or body[i + run] == "/"
            i += run
            if run >= 2 and opens and closes:
                if i == len(body):
                    tokens.append(("star", True))  # anything, "/" included
                else:
                    tokens += [("dirs", None), ("dirs-loop", None)]  # "(.*/)?": zero or more folders
                    i += 1
            else:
                tokens.append(("star", False))
            continue
        if ch == "?":
            tokens.append(("one", re.compile(".", re.DOTALL)))
        elif ch == "[":
            cls, i = _bracket(body, i)
            tokens.append(("one", re.compile(cls, re.DOTALL)))
            continue
        else:
            if ch == "\\":
                i += 1
                ch = body[i]
            tokens.append(("lit", ch))
        i += 1
    return _CharProgram(tokens)


def _compile_part(raw: str) -> _Part:
    pieces: list[str] = []
    current: list[str] = []
    width = 0
    stars = False
    i = 0
    while i < len(raw):
        ch = raw[i]
        if ch == "*":
            stars = True
            pieces.append("".join(current))
            current, width = [], 0
            while i < len(raw) and raw[i] == "*":
                i += 1
            continue
        if ch == "?":
            current.append(".")
        elif ch == "[":
            cls, i = _bracket(raw, i)
            current.append(cls)
            width += 1
            continue
        elif ch == "\\":
            i += 1
            current.append(re.escape(raw[i]))
        else:
            current.append(re.escape(ch))
        width += 1
        i += 1
    pieces.append("".join(current))
    return _Part(pieces, width, stars)


def _bracket(raw: str, start: int) -> tuple[str, int]:
    """A `[...]` class at raw[start] as a Python class, and the index after it."""
    i = start + 1
    negate = i < len(raw) and raw[i] in "!^"
    if negate:
        i += 1
    body: list[str] = []
    first = True
    previous: str | None = None  # the last single character, for ranges
    while i < len(raw):
        ch = raw[i]
        if ch == "]" and not first:
            if not body:
                raise PatternError(f"empty bracket expression in {raw!r}")
            return ("[^" if negate else "[") + "".join(body) + "]", i + 1
        first = False
        if ch == "[" and raw.startswith("[:", i):
            end = raw.find(":]", i + 2)
            name = raw[i + 2 : end] if end >= 0 else ""
            if end < 0 or name not in _POSIX_CLASSES:
                raise PatternError(f"unknown character class in {raw!r}")
            body.append(_POSIX_CLASSES[name])
            previous = None
            i = end + 2
            continue
        if ch == "\\":
            i += 1
            if i >= len(raw):
                break
            ch = raw[i]
        if ch == "-" and previous is not None and i + 1 < len(raw) and raw[i + 1] != "]":
            high = raw[i + 1]
            skip = 2
            if high == "\\" and i + 2 < len(raw):
                high, skip = raw[i + 2], 3
            if high < previous:
                raise PatternError(f"reversed range {previous}-{high} in {raw!r}")
            body.append("-" + re.escape(high))
            previous = None
            i += skip
            continue
        body.append(re.escape(ch))
        previous = ch
        i += 1
    raise PatternError(f"unterminated bracket expression in {raw!r}")


class PatternList(Record):
    """The usable patterns of one ignore file (or glob list), in file order."""

    patterns: list[Pattern]

    def decision(self, names: Sequence[str], is_dir: bool) -> bool | None:
        """True (ignored) / False (re-included by a `!` line) / None (no line matches):
        the last matching line decides."""
        for pattern in reversed(self.patterns):
            if pattern.matches(names, is_dir):
                return not pattern.negated
        return None

    def matches_file(self, names: Sequence[str], is_dir: bool = False) -> bool:
        """A glob list applied to a path (a file's unless is_dir): the last line matching
        it, or a folder holding it, decides; no match is False."""
        for pattern in reversed(self.patterns):
            if pattern.matches_path_or_parent(names, is_dir):
                return not pattern.negated
        return False


def compile_lines(lines: Iterable[str], *, quote: bool = True) -> tuple[PatternList | None, list[str]]:
    """The list of usable patterns (None when there is none) and one problem text per
    refused line ("line N: 'text' not obeyed: why"; without the text unless quote)."""
    kept: list[Pattern] = []
    problems: list[str] = []
    for number, line in enumerate(lines, 1):
        if len(kept) >= MAX_PATTERNS:
            problems.append(f"more than {MAX_PATTERNS} patterns: the rest are not obeyed")
            break
        try:
            pattern = compile_pattern(line)
        except PatternError as exc:
            text = f" {line[:80]!r}" if quote else ""
            problems.append(f"line {number}:{text} not obeyed: {exc}")
            continue
        if pattern is not None:
            kept.append(pattern)
    return (PatternList(kept) if kept else None), problems
