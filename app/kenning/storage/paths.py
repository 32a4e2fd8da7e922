"""Where the store lives: the user data dir, or $KENNING_HOME when set."""

from __future__ import annotations

import os
from pathlib import Path

STORE_FILENAME = "kenning.db"


def kenning_home() -> Path:
    override = os.environ.get("KENNING_HOME")
    if override:
        return Path(override).expanduser()
    from platformdirs import user_data_path

    return user_data_path("kenning", appauthor=False)


def default_store_path() -> Path:
    return kenning_home() / STORE_FILENAME


def model_cache_dir() -> Path:
    return kenning_home() / "models"
