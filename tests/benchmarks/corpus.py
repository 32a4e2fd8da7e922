"""Real text on this machine for benchmarks: Python's standard library, and the
packages installed beside it (the AWS CLI's reStructuredText examples give prose),
found wherever the running Python keeps them."""

from __future__ import annotations

import sysconfig
from pathlib import Path


def real_text_folders() -> list[Path]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    folders = [stdlib]
    for base in (stdlib / "site-packages", Path(sysconfig.get_paths()["purelib"])):
        if (base / "awscli" / "examples").is_dir():
            folders.append(base)
            break
    return folders
