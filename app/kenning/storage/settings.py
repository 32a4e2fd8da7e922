"""Key/value settings kept in the store (model choice, fusion defaults, ...)."""

from __future__ import annotations

import json

from kenning import TYPE_CHECKING
from kenning.storage.connection import Store

if TYPE_CHECKING:
    from typing import Any


def get_setting(store: Store, key: str) -> str | None:
    value = store.scalar("SELECT value FROM settings WHERE key = ?", (key,))
    return None if value is None else str(value)


def set_setting(store: Store, key: str, value: str) -> None:
    with store.atomic():
        store.execute("INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)", (key, value))


def get_json(store: Store, key: str, default: Any = None) -> Any:
    raw = get_setting(store, key)
    if raw is None:
        return default
    try:
        return json.loads(raw)
    except ValueError:
        return default


def set_json(store: Store, key: str, value: Any) -> None:
    set_setting(store, key, json.dumps(value))
