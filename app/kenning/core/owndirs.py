"""Kenning's own folders and files are user-only (0700 / 0600) whatever the umask.

mkdir's and open's modes are filtered by the umask, so under umask 000 a folder asked
for 0700 would still be 0700 but one made with the default mode would be 0777: every
folder Kenning creates (its home, the store's folder, the log folder, the prepared
model folders) goes through private_dir, every file it owns through private_file_fd.
"""

from __future__ import annotations

import os
from pathlib import Path

PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600


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
