"""The `kenning` command: parse arguments, call ingest/search, print."""

from __future__ import annotations

import argparse
import sys

from kenning import __version__
from kenning.core.errors import KenningError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kenning",
        description="Offline hybrid search over your notes and git repositories.",
    )
    parser.add_argument("--version", action="version", version=f"kenning {__version__}")
    parser.add_argument("--store", help="store file (default: $KENNING_HOME/kenning.db)")
    parser.add_argument("--model", help="embedding model for this command (see `kenning models`)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    sub.add_parser("gui", help="open the desktop app (the default)")

    sources = sub.add_parser("sources", help="add, list, remove sources")
    ssub = sources.add_subparsers(dest="sources_command", metavar="ACTION", required=True)
    add = ssub.add_parser("add", help="add a folder, or a git repository with --git")
    add.add_argument("path")
    add.add_argument("--git", action="store_true", help="link as a git repository")
    add.add_argument("--name", help="short name used by source: filters")
    add.add_argument("--include", action="append", default=[], metavar="GLOB")
    add.add_argument("--exclude", action="append", default=[], metavar="GLOB")
    ssub.add_parser("list", help="list sources")
    for action in ("remove", "enable", "disable"):
        p = ssub.add_parser(action, help=f"{action} a source")
        p.add_argument("name")
    globs = ssub.add_parser("globs", help="set a source's include/exclude globs")
    globs.add_argument("name")
    globs.add_argument("--include", action="append", default=[], metavar="GLOB")
    globs.add_argument("--exclude", action="append", default=[], metavar="GLOB")

    index = sub.add_parser("index", help="index all sources, or one")
    index.add_argument("name", nargs="?")
    index.add_argument("--no-embed", action="store_true", help="text only (lexical search)")

    sub.add_parser("status", help="sources, counts, pending vectors, skipped files, model")

    search = sub.add_parser("search", help="search")
    search.add_argument("query", nargs="+")
    search.add_argument("-n", "--limit", type=int, default=10)
    search.add_argument("--json", action="store_true", help="one JSON object per line")
    search.add_argument("--explain", action="store_true", help="show each score's breakdown")
    search.add_argument("--mode", choices=["hybrid", "lexical", "vector"], default="hybrid")
    search.add_argument("--fusion", choices=["rrf", "linear"], default="rrf")

    evaluate = sub.add_parser("eval", help="measure retrieval quality on a BEIR-layout folder")
    evaluate.add_argument("dataset")
    evaluate.add_argument("--mode", choices=["hybrid", "lexical", "vector", "all"], default="all")
    evaluate.add_argument("--fusion", choices=["rrf", "linear"], default="rrf")
    evaluate.add_argument("--json", action="store_true")
    evaluate.add_argument("--keep", metavar="DIR", help="index into DIR and keep it (re-runs reuse it)")

    models = sub.add_parser("models", help="list embedding models, or choose one")
    models.add_argument("use", nargs="?", help="`use NAME` makes NAME the model (re-embeds)")
    models.add_argument("name", nargs="?")

    sub.add_parser("rebuild", help="move a damaged store aside and index the sources again")
    return parser


def main(argv: list[str] | None = None, open_gui=None) -> int:
    """Run one command; open_gui(store_path) opens the desktop app (see kenning.launcher)."""
    args = build_parser().parse_args(argv)
    args.open_gui = open_gui
    from kenning.cli import commands

    handler = commands.HANDLERS.get(args.command or "gui")
    try:
        return handler(args) or 0
    except KenningError as exc:
        print(f"kenning: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nkenning: interrupted; what was indexed so far is kept.", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - SQLite errors a command did not expect
        message = store_error_message(exc, args)
        if message is None:
            raise
        print(f"kenning: {message}", file=sys.stderr)
        return 2


def store_error_message(exc: BaseException, args) -> str | None:
    """What to tell the user about an SQLite error that escaped a command, or None
    when exc is not one (a real bug: let its traceback show).

    Damage often shows only when a damaged page is read (not at open), and a
    writer blocked past the busy timeout raises BusyError; neither may reach the
    user as a traceback or as SQLite's bare "database is locked".
    """
    import apsw

    from kenning.storage.connection import describe_open_failure
    from kenning.storage.paths import default_store_path

    if not isinstance(exc, apsw.Error):
        return None
    path = args.store or str(default_store_path())
    if isinstance(exc, (apsw.BusyError, apsw.LockedError)):
        return (
            f"the store {path} is busy: another Kenning process (the app, or an indexer) "
            "kept it for too long. Try again in a moment."
        )
    if isinstance(exc, (apsw.CorruptError, apsw.NotADBError)):
        return describe_open_failure(path, exc)
    # Other SQLite errors here (sqlite-vec failing to read a vector blob, a missing
    # table) also mean the file is not what Kenning wrote: offer the same way out.
    return (
        f"the store {path} could not be used ({type(exc).__name__}: {exc}). If this "
        "persists, the store may be damaged: `kenning rebuild` moves it aside and "
        "indexes your sources again."
    )


if __name__ == "__main__":
    sys.exit(main())
