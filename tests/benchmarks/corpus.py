"""Real text on this machine for benchmarks: Python's standard library, and the
packages installed beside it (the AWS CLI's reStructuredText examples give prose),
found wherever the running Python keeps them."""

from __future__ import annotations

import sysconfig
from pathlib import Path

# About 100k chunks in all with this Python 3.11: the standard library (~60k) and
# three packages beside it: the AWS CLI (rst prose), numpy and pip (~43k).
SITE_PACKAGES_INCLUDE = ("awscli/**", "numpy/**", "pip/**")


def real_text_folders() -> list[tuple[Path, tuple[str, ...]]]:
    """(folder, include globs) pairs."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    folders: list[tuple[Path, tuple[str, ...]]] = [(stdlib, ())]
    for base in (stdlib / "site-packages", Path(sysconfig.get_paths()["purelib"])):
        if (base / "awscli" / "examples").is_dir():
            folders.append((base, SITE_PACKAGES_INCLUDE))
            break
    return folders
