"""'Open in Obsidian' for files inside a vault: an `obsidian://open` link.

A vault is a folder holding `.obsidian/` (Obsidian's own settings). The link names the
vault by its folder name and the file by its path inside the vault, as Obsidian's own
"Copy Obsidian URL" does; Obsidian opens the note (or says the vault is unknown).
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from urllib.parse import quote

VAULT_MARKER = ".obsidian"
MAX_LEVELS = 32  # a path is never deeper; stops a walk up a strange mount early


def obsidian_url(abs_path: str | os.PathLike[str]) -> str | None:
    """The link that opens abs_path in Obsidian, or None when no vault holds it."""
    path = Path(abs_path)
    vault = _vault_of(str(path.parent))
    if vault is None:
        return None
    rel = path.relative_to(vault).as_posix()
    # The name's own bytes, percent-encoded: a byte that is not UTF-8 stays that byte.
    name, file = (quote(os.fsencode(part), safe="") for part in (Path(vault).name, rel))
    return f"obsidian://open?vault={name}&file={file}"


@lru_cache(maxsize=4096)
def _vault_of(folder: str) -> str | None:
    """The nearest folder at or above `folder` with a .obsidian folder (cached: hits share folders)."""
    current = Path(folder)
    for _ in range(MAX_LEVELS):
        try:
            if (current / VAULT_MARKER).is_dir():
                return str(current)
        except OSError:
            return None
        if current.parent == current:
            return None
        current = current.parent
    return None
