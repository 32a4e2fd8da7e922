"""Where in its file a hit's match is: the line and column an editor opens at.

One answer for `kenning search --format vimgrep` and the app's Enter: the first matched
word of the chunk (a hit found by meaning alone: its first non-blank line).
"""

from __future__ import annotations

from kenning import TYPE_CHECKING

if TYPE_CHECKING:
    from kenning.core.types import Hit


def match_position(hit: Hit) -> tuple[int, int, str]:
    """(file line, byte column, that line's text) of the hit's first matched word."""
    lines = hit.text.split("\n")
    words = [hit.snippet[start:end].casefold() for start, end in hit.spans]
    for offset, line in enumerate(lines):
        folded = line.casefold()
        found = [i for i in (folded.find(w) for w in words if w) if i >= 0]
        # casefold keeps the length of nearly every character; where it does not
        # (ß → ss) the column is still on the right line, which is what an editor needs.
        if found and len(folded) == len(line):
            return hit.line_start + offset, len(line[: min(found)].encode("utf-8")) + 1, line
        if found:
            return hit.line_start + offset, 1, line
    first = next((i for i, line in enumerate(lines) if line.strip()), 0)
    return hit.line_start + first, 1, lines[first] if lines else ""
