"""Regular expressions compiled when first used, not when their module is imported.

A module-level `re.compile` costs tens to hundreds of microseconds at import, in every
process, whether or not the command ever matches with it (a dozen of them were on the
path of a lexical search).  `lazy_pattern(...)` is used exactly like the compiled pattern
(`_WORD.finditer(text)`), and typed as one; the first attribute asked for compiles it,
and each method is then kept on the object, so later uses cost what a compiled
pattern's do.
"""

from __future__ import annotations

import re

from kenning import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any


def lazy_pattern(pattern: str, flags: int = 0) -> re.Pattern[str]:
    # Stands in for the compiled pattern, answering its attributes (no typing.cast: a call).
    return _LazyPattern(pattern, flags)  # type: ignore[return-value]


class _LazyPattern:
    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags

    def compiled(self) -> re.Pattern[str]:
        found: re.Pattern[str] | None = self.__dict__.get("_compiled")
        if found is None:
            found = re.compile(self.pattern, self.flags)
            self.__dict__["_compiled"] = found
        return found

    def __getattr__(self, name: str) -> Any:
        # Called only for names not yet on the object: match, sub, finditer, groups...
        value = getattr(self.compiled(), name)
        if callable(value):
            self.__dict__[name] = value  # the bound method, found directly next time
        return value

    def __repr__(self) -> str:
        return f"lazy_pattern({self.pattern!r})"
