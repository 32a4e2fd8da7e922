"""Search results as editors and shell tools read them: `path:line:col:text` and bare paths.

The vimgrep form is the one Vim's quickfix (`vim -q`, `:cexpr`), Emacs' grep-mode and
VS Code's terminal links all follow (and ripgrep's --vimgrep writes): an absolute path,
the 1-based line, the 1-based byte column (Vim's `%c`) and the line's text. Each hit
points at its first matched word; a hit found by meaning alone points at its first line.
A hit in an extracted document (PDF, notebook, mail) points at the file's start and says
where in the document it is (`[p. 12] …`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from kenning import TYPE_CHECKING
from kenning.cli.terminal import printable
from kenning.core.positions import match_position

if TYPE_CHECKING:
    from kenning.core.types import SearchResult

FORMATS = ("vimgrep", "paths")


def vimgrep_lines(result: SearchResult) -> Iterator[str]:
    # Imported here: `kenning` builds its parser from FORMATS for every command.
    from kenning.ingest.extract import is_extracted

    for hit in result.hits:
        if hit.location or is_extracted(hit.kind):
            # A PDF, a notebook...: line numbers count the extracted text, not the file's
            # lines, so the file is named at its start and the message says where.
            line, column, text = 1, 1, f"[{hit.location or hit.kind}] {match_position(hit)[2].strip()}"
        else:
            line, column, text = match_position(hit)
        yield f"{printable(hit.abs_path)}:{line}:{column}:{printable(text.strip())}"


def unique_paths(result: SearchResult) -> Iterator[str]:
    """Each hit's file once, best hit first (for xargs, fzf)."""
    seen: set[str] = set()
    for hit in result.hits:
        if hit.abs_path not in seen:
            seen.add(hit.abs_path)
            yield printable(hit.abs_path)


def print_editor_format(result: SearchResult, fmt: str, write: Callable[..., object] = print) -> None:
    rows = vimgrep_lines(result) if fmt == "vimgrep" else unique_paths(result)
    for row in rows:
        write(row)
