"""Where the store lives: the user data dir, or $KENNING_HOME when set.

Kenning's folders hold private notes (the store) and what was derived from them, so
every folder Kenning creates is user-only (0700) whatever the umask, and Kenning's own
home and model cache are tightened when an earlier run left them open.
"""

from __future__ import annotations

import os
from pathlib import Path

STORE_FILENAME = "kenning.db"
PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600


def kenning_home() -> Path:
    override = os.environ.get("KENNING_HOME")
    if override:
        return Path(override).expanduser()
    from platformdirs import user_data_path

    return user_data_path("kenning", appauthor=False)


def default_store_path() -> Path:
    return kenning_home() / STORE_FILENAME


def model_cache_dir() -> Path:
    """The model cache, created (with Kenning's home) user-only on first use."""
    home = kenning_home()
    cache = home / "models"
    try:
        private_dir(cache)
        tighten_own_dir(home)
        tighten_own_dir(cache)
    except OSError:
        pass  # reported by whoever writes there first, with the path in the message
    return cache


def private_dir(path: Path) -> Path:
    """Create `path` and any missing parents 0700 (mkdir's mode is filtered by the umask,
    so each folder created here is chmod-ed too).  Existing folders are left alone."""
    missing = []
    probe = Path(path)
    while not probe.exists() and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, PRIVATE_DIR_MODE)
        except FileExistsError:
            continue  # another process made it first
        os.chmod(folder, PRIVATE_DIR_MODE)
    return Path(path)


def tighten_own_dir(path: Path) -> None:
    """Make one of Kenning's own folders user-only if this user owns it and it is open."""
    info = os.stat(path)
    if info.st_mode & 0o077 and info.st_uid == getattr(os, "getuid", lambda: info.st_uid)():
        os.chmod(path, PRIVATE_DIR_MODE)


def private_file_fd(path: Path | str, flags: int) -> int:
    """os.open with O_CREAT, the file user-only (0600) even if it existed with a wider mode."""
    fd = os.open(path, flags | os.O_CREAT, PRIVATE_FILE_MODE)
    try:
        if hasattr(os, "fchmod"):
            os.fchmod(fd, PRIVATE_FILE_MODE)
    except OSError:
        pass  # a file system without modes (FAT, some network shares)
    return fd
