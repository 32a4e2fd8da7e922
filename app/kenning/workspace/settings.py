"""The user's settings: one typed definition read by every front end.

Where a value comes from, strongest first (docs/architecture.md §2, "Settings"):

1. a command-line flag for one command (``kenning search --fusion linear``),
2. the environment (``KENNING_MODEL``, ``KENNING_FUSION``, ``KENNING_LIMIT``,
   ``KENNING_SIZE_CAP_MB``): a value set there wins over the stored one in the CLI
   and in the app alike, and the app's settings dialog shows it as fixed,
3. the store (``kenning settings set`` or the app's settings dialog; one row per
   setting, so two front ends saving different settings never undo each other),
4. the defaults below.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import asdict, field, replace

from kenning import TYPE_CHECKING
from kenning.core.errors import KenningError
from kenning.core.records import Record, fields
from kenning.core.types import FUSIONS, NEIGHBOURS_LIST
from kenning.embedding import DEFAULT_MODEL
from kenning.ingest.limits import DEFAULT_SIZE_CAP
from kenning.search.fusion import DEFAULT_FUSION, DEFAULT_LIMIT, DEFAULT_WEIGHTS
from kenning.storage.api import Store

if TYPE_CHECKING:
    from typing import Any

    from kenning.core.types import Fusion

MB = 1024 * 1024
THEMES = ("system", "light", "dark")
LIMIT_RANGE = (1, 200)
SIZE_CAP_RANGE = (1 * MB, 512 * MB)
WEIGHT_RANGE = (0.0, 5.0)
LEGACY_KEY = "gui_settings"  # before 0.x the app kept fusion/weights/limit/size cap in one JSON row


class SettingsError(KenningError):
    """A setting's value is not one Kenning accepts (the message says what is)."""


class Settings(Record, frozen=True):
    """What the user chose. Every front end reads these, none defines its own."""

    embedding_model: str = DEFAULT_MODEL
    fusion: Fusion = DEFAULT_FUSION
    weights: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    limit: int = DEFAULT_LIMIT  # results shown (the app's list, `kenning search` without -n, MCP without limit)
    size_cap: int = DEFAULT_SIZE_CAP  # bytes: larger files are skipped when indexing
    editor: str = "system"  # a preset of workspace.editor, or a command template with {file}
    theme: str = "system"  # the app's colours: system, light or dark

    @property
    def size_cap_mb(self) -> int:
        return max(1, self.size_cap // MB)


FIELDS = tuple(f.name for f in fields(Settings))
# Environment variables, and how their text becomes a value.
ENVIRONMENT = {
    "embedding_model": "KENNING_MODEL",
    "fusion": "KENNING_FUSION",
    "limit": "KENNING_LIMIT",
    "size_cap": "KENNING_SIZE_CAP_MB",
    "theme": "KENNING_THEME",
}
DESCRIPTIONS = {
    "embedding_model": "embedding model used for semantic search (see `kenning models`)",
    "fusion": f"how the ranked lists are merged: {' or '.join(FUSIONS)}",
    "weights": "weight of each ranked list, e.g. `porter=1 trigram=0.5 vector=1.5 feedback=0.5 neighbours=0.75`",
    "limit": "number of results shown (the app's list, `kenning search` without -n)",
    "size_cap": "files larger than this are skipped when indexing (in MB)",
    "editor": "where Enter opens a hit: system, vscode, vim, neovim, emacs, sublime, jetbrains, or a command with {file} and {line}",
    "theme": f"the app's colours: {', '.join(THEMES)}",
}


# -- validation --------------------------------------------------------------------


def validate(name: str, value: Any) -> Any:
    """The value, normalised, or SettingsError saying what is accepted."""
    if name == "embedding_model":
        text = str(value).strip()
        if not text:
            raise SettingsError("The embedding model needs a name (see `kenning models`).")
        return text
    if name == "fusion":
        if value not in FUSIONS:
            raise SettingsError(f"fusion must be one of {', '.join(FUSIONS)} (not {value!r}).")
        return value
    if name == "limit":
        return _in_range("limit", _as_int("limit", value), *LIMIT_RANGE)
    if name == "size_cap":
        return _in_range("size_cap", _as_int("size_cap", value), *SIZE_CAP_RANGE, unit=MB)
    if name == "weights":
        return _valid_weights(value)
    if name == "editor":
        try:
            from kenning.workspace.editor import validate_editor  # shlex, shutil: for this setting only

            return validate_editor(value)
        except KenningError as exc:
            raise SettingsError(str(exc)) from None
    if name == "theme":
        if value not in THEMES:
            raise SettingsError(f"theme must be one of {', '.join(THEMES)} (not {value!r}).")
        return value
    raise SettingsError(f"There is no setting {name!r}; settings: {', '.join(FIELDS)}.")


def _as_int(name: str, value: Any) -> int:
    if isinstance(value, bool):
        raise SettingsError(f"{name} must be a whole number.")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise SettingsError(f"{name} must be a whole number (not {value!r}).") from None
    if not -(2**62) < number < 2**62 or number != int(number):  # also refuses nan and inf
        raise SettingsError(f"{name} must be a whole number (not {value!r}).")
    return int(number)


def _in_range(name: str, value: int, low: int, high: int, unit: int = 1) -> int:
    if not low <= value <= high:
        suffix = " MB" if unit != 1 else ""
        raise SettingsError(f"{name} must be between {low // unit} and {high // unit}{suffix}.")
    return value


def _valid_weights(value: Any) -> dict[str, float]:
    if not isinstance(value, Mapping):
        raise SettingsError("weights must map list names to numbers, e.g. porter=1 vector=1.")
    out = dict(DEFAULT_WEIGHTS)
    for key, weight in value.items():
        if key not in DEFAULT_WEIGHTS:
            raise SettingsError(f"There is no ranked list {key!r}; lists: {', '.join(DEFAULT_WEIGHTS)}.")
        try:
            number = float(weight)
        except (TypeError, ValueError):
            raise SettingsError(f"The weight of {key} must be a number (not {weight!r}).") from None
        if not WEIGHT_RANGE[0] <= number <= WEIGHT_RANGE[1]:  # also refuses nan
            raise SettingsError(f"The weight of {key} must be between {WEIGHT_RANGE[0]:g} and {WEIGHT_RANGE[1]:g}.")
        out[key] = number
    if not any(weight for name, weight in out.items() if name != NEIGHBOURS_LIST):  # it is made of the others
        raise SettingsError("At least one weight must be above 0: with every list weighted 0 nothing is ranked.")
    return out


def parse_text(name: str, text: str) -> Any:
    """A value typed by a user (`kenning settings set`, an environment variable)."""
    if name == "size_cap":
        number = text.strip()
        number = number[:-2] if number.upper().endswith("MB") else number
        return validate(name, _as_int("size_cap", number.strip()) * MB)
    if name == "weights":
        pairs = {}
        for part in text.replace(",", " ").split():
            key, sep, weight = part.partition("=")
            if not sep:
                raise SettingsError(f"Write each weight as name=number (not {part!r}).")
            pairs[key.strip()] = weight.strip()
        return validate(name, pairs)
    return validate(name, text.strip())


def format_value(name: str, value: Any) -> str:
    if name == "size_cap":
        return f"{max(1, value // MB)} MB"
    if name == "weights":
        return " ".join(f"{k}={v:g}" for k, v in value.items())
    return str(value)


# -- reading and writing -----------------------------------------------------------


def environment_overrides(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Settings fixed by the environment; a malformed value is an error, not ignored."""
    environ = os.environ if environ is None else environ
    out = {}
    for name, variable in ENVIRONMENT.items():
        raw = environ.get(variable, "").strip()
        if raw:
            try:
                out[name] = parse_text(name, raw)
            except SettingsError as exc:
                raise SettingsError(f"{variable}={raw!r} in the environment: {exc}") from None
    return out


def stored_settings(store: Store) -> Settings:
    """The settings as saved in the store (no environment), defaults for the rest."""
    legacy = store.settings.get_json(LEGACY_KEY, {}) or {}
    values: dict[str, Any] = {}
    for name in FIELDS:
        raw = store.settings.get_json(name, None) if name != "embedding_model" else store.settings.get(name)
        if raw is None and name in legacy and name != "embedding_model":
            raw = legacy[name]
        if raw is None:
            continue
        try:
            values[name] = validate(name, raw)
        except SettingsError:
            continue  # a value an older or newer version wrote: the default is the safe reading
    return Settings(**values)


def effective_settings(store: Store, environ: Mapping[str, str] | None = None) -> Settings:
    """What Kenning runs with: the stored settings under the environment's overrides."""
    return replace(stored_settings(store), **environment_overrides(environ))


def with_changes(settings: Settings, **changes: Any) -> Settings:
    """settings with the changes applied, validated (nothing is stored)."""
    return replace(settings, **{name: validate(name, value) for name, value in changes.items()})


def save_settings(store: Store, **changes: Any) -> Settings:
    """Validate and store the given settings (the others keep their stored value)."""
    checked = {name: validate(name, value) for name, value in changes.items()}
    if "embedding_model" in checked:
        from kenning.embedding import known_model_name  # the catalog: only when a model is chosen

        # Only a choice is checked against the catalog: a stored or environment value
        # that is not (any more) a model must still load, so the user can change it.
        try:
            checked["embedding_model"] = known_model_name(checked["embedding_model"])
        except KenningError as exc:
            raise SettingsError(str(exc)) from None
    with store.atomic():
        for name, value in checked.items():
            if name == "embedding_model":  # plain text: the key and format predate this module
                store.settings.set(name, value)
            else:
                store.settings.set_json(name, value)
    return stored_settings(store)


def reset_settings(store: Store, *names: str) -> Settings:
    """Back to the defaults for the named settings."""
    defaults = asdict(Settings())
    return save_settings(store, **{name: defaults[validate_name(name)] for name in names})


def validate_name(name: str) -> str:
    if name not in FIELDS:
        raise SettingsError(f"There is no setting {name!r}; settings: {', '.join(FIELDS)}.")
    return name
