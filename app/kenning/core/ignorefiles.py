"""The .gitignore files of one source, read safely and obeyed in linear time.

Folder sources and git sources share it: for a git source Kenning decides which
untracked files are ignored itself (git lists them without reading any ignore file),
because git's own matcher backtracks on hostile patterns and blocks on a FIFO named
.gitignore.  Every ignore file is opened through the source's SourceRoot (never outside
the root, never in .git/, never a FIFO or a device, at most MAX_IGNORE_FILE_BYTES).

A .gitignore that exists but cannot be read says nothing about what it ignores: the
files of its folder are then left out and listed (IgnoreUnreadable), never indexed as
if it were absent.
"""

from __future__ import annotations

import errno
import stat
from collections.abc import Sequence

from kenning.core.confine import GIT_INTERNAL, OUTSIDE_ROOT, Refused, SourceRoot, open_regular, read_at_most
from kenning.core.types import SkippedFile
from kenning.core.wildmatch import PatternList, compile_lines

IGNORE_FILE = ".gitignore"
MAX_IGNORE_FILE_BYTES = 1 << 20
BAD_PATTERN = "bad-pattern"
UNREADABLE = "unreadable"


class IgnoreUnreadable(Exception):
    """A folder's .gitignore exists but cannot be read: its files cannot be judged."""

    def __init__(self, rel_dir: str, detail: str) -> None:
        super().__init__(detail)
        self.rel_dir = rel_dir
        self.detail = detail

    def skipped(self) -> SkippedFile:
        return SkippedFile(self.rel_dir or ".", UNREADABLE, self.detail)


def shown(parts: Sequence[str]) -> str:
    """A path of file-system names as the skipped list shows it."""
    from kenning.core.fsnames import storable_name

    return storable_name("/".join(parts))


class IgnoreRules:
    """What the ignore files of a tree decide, folder by folder, deepest line last.

    follow_links: a folder source follows a .gitignore that is a link inside the root;
    git does not follow one, so a git source lists it as not obeyed.  `base` holds lists
    weaker than every .gitignore (git's info/exclude and the user's global excludes).
    Problems (bad lines, files not obeyed) are appended to `problems` once each.
    """

    def __init__(
        self,
        root: SourceRoot,
        problems: list[SkippedFile],
        *,
        follow_links: bool = True,
        base: Sequence[PatternList] = (),
    ) -> None:
        self.root = root
        self.problems = problems
        self.follow_links = follow_links
        self.base = tuple(base)
        self._folders: dict[tuple[str, ...], PatternList | None | IgnoreUnreadable] = {}
        self._excluded: dict[tuple[str, ...], bool] = {}

    def folder(self, dir_parts: Sequence[str]) -> PatternList | None:
        """The patterns of dir_parts/.gitignore (None: absent or empty); IgnoreUnreadable."""
        key = tuple(dir_parts)
        if key not in self._folders:
            self._folders[key] = self._load(key)
        found = self._folders[key]
        if isinstance(found, IgnoreUnreadable):
            raise found
        return found

    def ignored(self, parts: Sequence[str], is_dir: bool) -> bool:
        """The verdict on parts itself (its folders' verdicts not consulted)."""
        verdict: bool | None = None
        for rules in self.base:
            decision = rules.decision(parts, is_dir)
            if decision is not None:
                verdict = decision
        for depth in range(len(parts)):
            folder_rules = self.folder(parts[:depth])
            if folder_rules is not None:
                decision = folder_rules.decision(parts[depth:], is_dir)
                if decision is not None:
                    verdict = decision
        return bool(verdict)

    def excluded(self, parts: Sequence[str], is_dir: bool) -> bool:
        """Ignored itself or inside an ignored folder (git cannot re-include a file
        whose folder is excluded).  IgnoreUnreadable from any folder on the way."""
        for depth in range(1, len(parts)):
            if self._folder_excluded(tuple(parts[:depth])):
                return True
        return self.ignored(parts, is_dir)

    def _folder_excluded(self, key: tuple[str, ...]) -> bool:
        if key not in self._excluded:
            self._excluded[key] = self.ignored(key, True)
        return self._excluded[key]

    def _load(self, dir_parts: tuple[str, ...]) -> PatternList | None | IgnoreUnreadable:
        parts = (*dir_parts, IGNORE_FILE)
        rel = shown(parts)
        try:
            if not self.follow_links and stat.S_ISLNK(self.root.lstat(parts).st_mode):
                self._problem(rel, BAD_PATTERN, "a symbolic link: not obeyed (git does not follow it either)")
                return None
            with self.root.opened(parts) as handle:
                raw = read_at_most(handle, MAX_IGNORE_FILE_BYTES + 1)
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None  # no ignore file (a folder of that name holds no rules either)
        except Refused as exc:
            where = "outside the source" if exc.reason == OUTSIDE_ROOT else "into .git"
            reason = exc.reason if exc.reason in (OUTSIDE_ROOT, GIT_INTERNAL) else BAD_PATTERN
            self._problem(rel, reason, f"a symlink leading {where}; not obeyed")
            return None
        except OSError as exc:
            what = exc.strerror or str(exc)
            return IgnoreUnreadable(
                shown(dir_parts), f"{IGNORE_FILE} cannot be read ({what}): the files it could exclude are not indexed"
            )
        if len(raw) > MAX_IGNORE_FILE_BYTES:
            self._problem(rel, BAD_PATTERN, f"larger than {MAX_IGNORE_FILE_BYTES} bytes: not obeyed")
            return None
        rules, problems = compile_lines(raw.decode("utf-8", "replace").splitlines())
        for problem in problems:
            self._problem(rel, BAD_PATTERN, problem)
        return rules

    def _problem(self, rel: str, reason: str, detail: str) -> None:
        self.problems.append(SkippedFile(rel, reason, detail))


def read_rules_file(path: str, problems: list[SkippedFile], shown_as: str) -> PatternList | None:
    """An ignore file outside the tree (git's info/exclude, the user's global excludes):
    a regular file reached without a final link, read without blocking, its lines never
    quoted in a problem (they are not the user's notes)."""
    try:
        with open_regular(path) as handle:
            raw = read_at_most(handle, MAX_IGNORE_FILE_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno != errno.ENOENT:
            problems.append(SkippedFile(shown_as, BAD_PATTERN, f"cannot be read ({exc.strerror or exc}): not obeyed"))
        return None
    if len(raw) > MAX_IGNORE_FILE_BYTES:
        problems.append(SkippedFile(shown_as, BAD_PATTERN, f"larger than {MAX_IGNORE_FILE_BYTES} bytes: not obeyed"))
        return None
    rules, bad = compile_lines(raw.decode("utf-8", "replace").splitlines(), quote=False)
    problems += [SkippedFile(shown_as, BAD_PATTERN, p) for p in bad]
    return rules
