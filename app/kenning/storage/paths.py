"""Where the store lives: the user data dir, or $KENNING_HOME when set.

Kenning's folders hold private notes (the store) and what was derived from them, so
every folder Kenning creates is user-only (0700) whatever the umask, and Kenning's own
home and model cache are tightened when an earlier run left them open.
"""

from __future__ import annotations

import os
from pathlib import Path

# Kenning's own folders and files are made user-only by kenning.core.owndirs.
from kenning.core.owndirs import private_dir, tighten_own_dir

STORE_FILENAME = "kenning.db"


APP_NAME = "kenning"  # the default home's own name in the platform's data folder


def kenning_home() -> Path:
    override = os.environ.get("KENNING_HOME")
    if override:
        return Path(override).expanduser()
    from platformdirs import user_data_path

    return user_data_path(APP_NAME, appauthor=False)


def is_kenning_home(folder: Path) -> bool:
    """Whether folder (an existing one) is Kenning's home.  Without KENNING_HOME the home
    is the platform data folder's `kenning`: a folder named otherwise, by its path and by
    its real path, is taken not to be it without asking platformdirs (~4% of a lexical
    search with --store); only a home that is a link to a folder of another name, named
    by that name, is missed (and then left as it is, like any folder --store names)."""
    resolved = folder.resolve()
    if not os.environ.get("KENNING_HOME") and APP_NAME not in (folder.name, resolved.name):
        return False
    return resolved == kenning_home().resolve()


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
