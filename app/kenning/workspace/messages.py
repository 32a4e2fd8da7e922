"""Turning any error into a message a user can act on: the one place that words them.

The CLI prints ``user_message(exc)`` after ``kenning:``; the app shows it in a dialog
or its status line.  Neither shows ``str(exc)`` of an exception it did not raise on
purpose: SQLite's "database is locked", an OSError's errno text or a library's
internal message say nothing about what to do.  Errors Kenning did not expect also
get their traceback written to the log (see ``logs``), whose path the message names.
"""

from __future__ import annotations

import errno
from pathlib import Path

from kenning.core.errors import KenningError, StoreUnusable, StoreWatchedError
from kenning.core.logger import get_logger
from kenning.core.patterns import lazy_pattern
from kenning.storage import failure_kind, failure_of

log = get_logger("kenning")

GIST_CHARS = 200
_CONTROL = lazy_pattern(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def user_message(exc: BaseException, store_path: Path | str | None = None) -> str:
    """What to tell the user about exc, in one or two sentences, ready to show."""
    return _printable(_describe(exc, store_path))


def is_expected(exc: BaseException) -> bool:
    """True for failures of the user's data or machine (no bug: no traceback needed)."""
    return isinstance(exc, (KenningError, OSError, MemoryError)) or failure_kind(exc) is not None


def report(exc: BaseException, store_path: Path | str | None = None, *, doing: str = "") -> str:
    """Log exc (with its traceback when unexpected) and return the user's message."""
    message = user_message(exc, store_path)
    what = f" (while {doing})" if doing else ""
    if isinstance(exc, KenningError):
        log.info("%s%s", message, what)  # the user's data or input: the message says it all
    elif is_expected(exc):
        log.warning("%s%s", message, what, exc_info=exc)
    else:
        log.error("unexpected error%s: %s", what, message, exc_info=exc)
    return message


def _describe(exc: BaseException, store_path: Path | str | None) -> str:
    if isinstance(exc, StoreWatchedError):  # rebuild refused while a watcher indexes into the store
        return (
            f"The store {exc.location} is being watched (`kenning index --watch`, or the app's live index): "
            "stop the watch and try again. Nothing was moved."
        )
    if isinstance(exc, StoreUnusable):  # opening it failed: storage says why, this says what to do
        return _store_message(exc.kind, exc.location, exc.detail, "")
    if isinstance(exc, KenningError):
        return str(exc)  # written to be shown as is (core/errors.py)
    failure = failure_of(exc)  # a backend's own database error (SQLite's, PostgreSQL's)
    if failure is not None:
        store, kind = failure
        if store == "team":
            return _team_message(exc, kind, store_path)
        where = str(store_path) if store_path and not _is_team(store_path) else str(_default_store())
        return _store_message(kind, where, str(exc), type(exc).__name__)
    if isinstance(exc, OSError):
        return _os_message(exc)
    if isinstance(exc, MemoryError):
        return "Kenning ran out of memory. Close other programs, or index fewer or smaller files, and try again."
    from kenning.workspace.logs import log_file

    location = log_file()
    where = f" The details are in the log: {location}" if location else ""
    return f"Something went wrong inside Kenning ({type(exc).__name__}: {_gist(exc)}).{where}"


def _gist(exc: BaseException) -> str:
    """An unexpected exception's text on one short line: the log has all of it."""
    text = " ".join(str(exc).split())
    return text if len(text) <= GIST_CHARS else text[: GIST_CHARS - 1] + "…"


def _store_message(kind: str, path: str, detail: str, name: str) -> str:
    """What to tell the user about a store its database refused (kind: api.FailureKind)."""
    if kind == "damaged":
        return (
            f"The store {path} is damaged ({detail}). Run `kenning rebuild` to move it "
            "aside and index your sources again; nothing in your files is touched."
        )
    if kind == "newer":  # detail: the newest schema step this Kenning does not know
        return (
            f"The store {path} was written by a newer Kenning (schema {detail}). "
            "Upgrade Kenning, or run `kenning rebuild` to move it aside and start a fresh store."
        )
    if kind == "not_set_up":  # a team store without its schema (or an upgrade), reached by a reader
        return (
            f"The team store {path} needs setting up or upgrading, and this role may not do it "
            f"({detail}). Ask its owner to run `kenning --store URL store upgrade`."
        )
    if kind == "busy":  # SQLite says "database is locked"; say who holds it and what to do
        return f"The store {path} is busy: another Kenning process kept it for too long. Try again in a moment."
    if kind == "full":
        return f"The disk holding the store {path} is full: free some space and try again."
    if kind == "io":
        # A failing or full disk, a vanished network share: not damage in the file, so no
        # advice to rebuild (that would throw away the embeddings).
        return (
            f"Kenning could not read or write the store {path} ({detail}): check the disk (full? failing? unmounted?)."
        )
    if kind == "permission":
        return f"Kenning may not write the store {path} ({detail}): check the file's and its folder's permissions."
    # Other database errors (a vector blob that cannot be read, a missing table) mean the
    # store is not what Kenning wrote: offer the way out.
    return (
        f"The store {path} could not be used ({f'{name}: ' if name else ''}{detail}). If this persists, the store "
        "may be damaged: `kenning rebuild` moves it aside and indexes your sources again."
    )


def model_mismatch_message(models: dict[str, str]) -> str:
    """Why stores embedded by different models are not searched together (models: each
    store's label -> its vectors' fingerprint "name|dimensions|version", or "none")."""
    names = {label: fingerprint.split("|")[0] for label, fingerprint in models.items()}
    named = ", ".join(f"{label}: {name}" for label, name in names.items())
    versions_only = len({name for name in names.values() if name != "none"}) <= 1
    return (
        f"These stores were embedded by different models ({named}), so their meaning searches "
        f"cannot be ranked together. Use one model for both (`kenning models use NAME` on each), "
        f"or search them one at a time." + (" (same model, another version)" if versions_only else "")
    )


TEAM_FAILURES = {
    "permission": "This role may not do that in the team store {store} ({detail}): "
    "changing it needs the writers' role (README: Team store).",
    "busy": "The team store {store} is busy: another writer kept it for too long ({detail}). Try again in a moment.",
    "full": "The team store {store}'s server is out of disk or memory ({detail}): tell its administrator.",
    "io": "Cannot reach the team store {store} ({detail}). Your personal store still works.",
    "unusable": "The team store {store} refused this ({detail}).",
}


def _team_message(exc: BaseException, kind: str, store_path: Path | str | None) -> str:
    """A team store's (PostgreSQL's) refusal: named by user@host/db, never with a password."""
    from kenning.workspace.teamstore import label

    store = label(str(store_path)) if store_path and _is_team(store_path) else "(team store)"
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    detail = " ".join(first.split())
    detail = detail if len(detail) <= GIST_CHARS else detail[: GIST_CHARS - 1] + "…"
    return TEAM_FAILURES.get(kind, TEAM_FAILURES["unusable"]).format(store=store, detail=detail)


def _is_team(store_path: Path | str) -> bool:
    from kenning.workspace.teamstore import is_team_target

    return is_team_target(store_path)


def _os_message(exc: OSError) -> str:
    name = f"{exc.filename}" if exc.filename else "a file"
    if isinstance(exc, PermissionError):
        return f"Kenning may not open {name}: permission denied."
    if isinstance(exc, FileNotFoundError):
        return f"{name} does not exist (was it moved or deleted?)."
    if exc.errno == errno.ENOSPC:
        return f"The disk is full (writing {name}): free some space and try again."
    return f"Cannot use {name}: {exc.strerror or exc}."


def _default_store() -> Path:
    from kenning.storage.paths import default_store_path

    return default_store_path()


def _printable(text: str) -> str:
    """Messages quote file names and SQLite text: no control character reaches a terminal."""
    return _CONTROL.sub("?", text)
