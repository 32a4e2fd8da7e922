"""The `kenning` command: parse arguments, call ingest/search, print."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path

from kenning import TYPE_CHECKING, __version__
from kenning.cli.completion import SHELLS
from kenning.cli.editor import FORMATS as EDITOR_FORMATS
from kenning.core.privacy import PRIVATE_OVERRIDE
from kenning.core.types import FUSIONS, SEARCH_MODES
from kenning.search.fusion import DEFAULT_FUSION
from kenning.workspace import report, start_logging
from kenning.workspace.messages import is_expected
from kenning.workspace.settings import FIELDS as SETTING_NAMES

if TYPE_CHECKING:
    from typing import Any

    from kenning.cli.served import ServedSession


def _result_count(text: str) -> int:
    """-n: a whole number within the limit setting's range (argparse words the error)."""
    from kenning.workspace.settings import LIMIT_RANGE

    low, high = LIMIT_RANGE
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not low <= value <= high:
        raise argparse.ArgumentTypeError(f"{text} is out of range: give {low} to {high} results")
    return value


def _terminal_columns() -> int:
    """shutil.get_terminal_size().columns, without importing shutil (~1.5 ms)."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns > 0:
        return columns
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        return 80


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's, laid out at the width shutil would measure: argparse makes a formatter
    for every argument added (to check its metavar) and imports shutil to measure it."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None):
        super().__init__(prog, indent_increment, max_help_position, _terminal_columns() - 2 if width is None else width)


class _Parser(argparse.ArgumentParser):
    """The CLI's parsers (its commands' too: argparse makes those of type(parent))."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The CLI's parser; with command, only that command's (see parse_arguments)."""
    parser = _Parser(
        prog="kenning",
        description="Offline hybrid search over your notes and git repositories.",
    )
    parser.add_argument("--version", action="version", version=f"kenning {__version__}")
    parser.add_argument(
        "--store",
        help="store file, or a team store: postgresql://USER@HOST/DB or service=NAME"
        " (default: $KENNING_STORE, else $KENNING_HOME/kenning.db)",
    )
    parser.add_argument("--model", help="embedding model for this command (see `kenning models`)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log details (and tracebacks) to stderr too")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, add in _COMMANDS.items():
        if command in (None, name):
            add(sub)
    return parser


def _add_gui_parser(sub: Any) -> None:
    sub.add_parser("gui", help="open the desktop app (the default)")


def _add_sources_parser(sub: Any) -> None:
    sources = sub.add_parser("sources", help="add, list, remove, enable, disable sources; set their globs")
    ssub = sources.add_subparsers(dest="sources_command", metavar="ACTION", required=True)
    add = ssub.add_parser("add", help="add a folder, or a git repository with --git")
    add.add_argument("path")
    add.add_argument("--git", action="store_true", help="link as a git repository")
    add.add_argument("--name", help="short name used by source: filters")
    add.add_argument("--include", action="append", default=[], metavar="GLOB")
    add.add_argument("--exclude", action="append", default=[], metavar="GLOB")
    add.add_argument(
        PRIVATE_OVERRIDE,
        action="store_true",
        help="index a credential or system folder anyway (refused otherwise: see the README's security section)",
    )
    listing = ssub.add_parser("list", help="list sources")
    # For shell completion scripts: bare names, or as `source:NAME` filters.
    listing.add_argument("--names", action="store_true", help=argparse.SUPPRESS)
    listing.add_argument("--as-filter", action="store_true", help=argparse.SUPPRESS)
    for action in ("remove", "enable", "disable"):
        p = ssub.add_parser(action, help=f"{action} a source")
        p.add_argument("name")
    globs = ssub.add_parser("globs", help="set a source's include/exclude globs")
    globs.add_argument("name")
    globs.add_argument("--include", action="append", default=[], metavar="GLOB")
    globs.add_argument("--exclude", action="append", default=[], metavar="GLOB")


def _add_index_parser(sub: Any) -> None:
    index = sub.add_parser("index", help="index all sources, or one")
    index.add_argument("name", nargs="?")
    index.add_argument("--no-embed", action="store_true", help="text only (lexical search)")
    index.add_argument(
        "--watch", action="store_true", help="after indexing, keep watching the sources and index changes (Ctrl+C ends)"
    )


def _add_status_parser(sub: Any) -> None:
    status = sub.add_parser("status", help="sources, counts, pending vectors, skipped files, model")
    status.add_argument("--json", action="store_true", help="one JSON object (see the README's JSON output)")
    _add_no_service(status)


def _add_search_parser(sub: Any) -> None:
    search = sub.add_parser("search", help="search")
    search.add_argument("query", nargs="+", help='words, "phrases", -exclusions and filters (see the README)')
    search.add_argument("-n", "--limit", type=_result_count, help="number of results (default: the limit setting)")
    search.add_argument(
        "--json", action="store_true", help='JSON lines: what the search meant ("type": "search"), then each hit'
    )
    search.add_argument(
        "--format", choices=EDITOR_FORMATS, help="vimgrep: path:line:col:text lines (vim -q); paths: unique file paths"
    )
    search.add_argument("--explain", action="store_true", help="show each score's breakdown")
    search.add_argument("--mode", choices=SEARCH_MODES, default="hybrid")
    search.add_argument("--fusion", choices=FUSIONS, help="default: the fusion setting")
    search.add_argument(
        "--also-store",
        metavar="STORE",
        help="search this store too (a team store's postgresql://… or service=NAME, or a file): one list",
    )
    _add_no_service(search)


def _add_tags_parser(sub: Any) -> None:
    tags = sub.add_parser("tags", help="list tags (front matter and inline #tags) with how many documents carry them")
    # For shell completion scripts: bare names, or as `tag:NAME` filters.
    tags.add_argument("--names", action="store_true", help=argparse.SUPPRESS)
    tags.add_argument("--as-filter", action="store_true", help=argparse.SUPPRESS)
    _add_no_service(tags)


def _add_links_parser(sub: Any) -> None:
    links = sub.add_parser("links", help="a note's links, backlinks and unlinked mentions; or every unresolved link")
    links.add_argument("path", nargs="?", help="an indexed file: its path in a source, or its absolute path")
    links.add_argument("--source", help="the source holding PATH (when several hold that path)")
    links.add_argument("--unresolved", action="store_true", help="list links that name no indexed file (or several)")
    links.add_argument("--no-mentions", action="store_true", help="leave out unlinked mentions (faster)")
    links.add_argument("--json", action="store_true", help="one JSON object (see the README's JSON output)")
    _add_no_service(links)


def _add_eval_parser(sub: Any) -> None:
    evaluate = sub.add_parser("eval", help="measure retrieval quality on a BEIR-layout folder")
    evaluate.add_argument("dataset")
    evaluate.add_argument("--mode", choices=[*SEARCH_MODES, "all"], default="all")
    evaluate.add_argument("--fusion", choices=FUSIONS, default=DEFAULT_FUSION)
    evaluate.add_argument("--json", action="store_true")
    evaluate.add_argument("--keep", metavar="DIR", help="index into DIR and keep it (re-runs reuse it)")


def _add_models_parser(sub: Any) -> None:
    models = sub.add_parser("models", help="list embedding models, or choose one")
    models.add_argument("use", nargs="?", help="`use NAME` makes NAME the model (re-embeds)")
    models.add_argument("name", nargs="?")


def _add_rebuild_parser(sub: Any) -> None:
    sub.add_parser("rebuild", help="move a damaged store aside and index the sources again")


def _add_store_parser(sub: Any) -> None:
    store = sub.add_parser("store", help="the store itself: `store upgrade` brings its schema up to date")
    store.add_argument("store_command", choices=["upgrade"], metavar="ACTION")


def _add_settings_parser(sub: Any) -> None:
    settings = sub.add_parser("settings", help="show or change settings (shared with the desktop app)")
    setsub = settings.add_subparsers(dest="settings_command", metavar="ACTION")
    setsub.add_parser("list", help="show every setting and where its value comes from")
    change = setsub.add_parser("set", help="change a setting, e.g. `set fusion linear`, `set weights vector=1.5`")
    change.add_argument("name", choices=SETTING_NAMES)
    change.add_argument("value", nargs="+")
    reset = setsub.add_parser("reset", help="back to the default (all settings when none is named)")
    reset.add_argument("names", nargs="*", metavar="NAME")


def _add_completion_parser(sub: Any) -> None:
    completion = sub.add_parser("completion", help="print the shell completion script (see the README)")
    completion.add_argument("shell", choices=SHELLS)


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    """The parsed command line.

    A search query may go on after the options (`search rollback -n 5 tag:ops`) and
    hold exclusions (`search deploy -canary`): words argparse does not know are the
    query's, as long as they do not look like a long option (a mistyped `--jsn`).

    Only the named command's parser is built (15 of them took ~10 ms of a 100 ms
    `kenning status`); `kenning -h`, a wrong command, or global options argparse would
    have to expand (`--sto`) get every one, so each message is what the whole parser says.
    """
    words = sys.argv[1:] if argv is None else argv
    parser = build_parser(_command_in(words))
    args, extra = parser.parse_known_args(words)
    if extra:
        if args.command != "search" or any(word.startswith("--") for word in extra):
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        args.query = [*args.query, *extra]
    return args


_GLOBAL_WITH_VALUE = ("--store", "--model")
_GLOBAL_FLAGS = ("-v", "--verbose")


def _command_in(words: list[str]) -> str | None:
    """The command the words name after global options spelled in full, else None."""
    rest = iter(words)
    for word in rest:
        if word in _GLOBAL_WITH_VALUE:
            next(rest, None)
        elif word not in _GLOBAL_FLAGS and not word.startswith(tuple(f"{name}=" for name in _GLOBAL_WITH_VALUE)):
            return word if word in _COMMANDS else None
    return None


def _answer_cap(text: str) -> int:
    """--max-bytes: a whole number no smaller than an answer needs (argparse words the error)."""
    from kenning.mcpserver.options import check_max_bytes

    try:
        return check_max_bytes(int(text))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(
            str(exc) if text.strip().lstrip("-").isdigit() else f"{text!r} is not a whole number"
        ) from None


def _add_no_service(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-service", action="store_true", help="run in this process even when a `kenning serve` is running"
    )


def _minutes(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of minutes") from None
    if value < 0:
        raise argparse.ArgumentTypeError("give 0 (never) or more minutes")
    return value


def _add_serve_parser(sub: Any) -> None:
    from kenning.serve import DEFAULT_IDLE_MINUTES

    parser = sub.add_parser("serve", help="keep this store and its model loaded for the CLI, assistants and the app")
    parser.add_argument(
        "--idle",
        type=_minutes,
        default=DEFAULT_IDLE_MINUTES,
        metavar="MINUTES",
        help=f"stop after this long without a request (0: never; default {DEFAULT_IDLE_MINUTES:g})",
    )
    parser.add_argument("--no-watch", action="store_true", help="do not watch the sources for changes")
    parser.add_argument(
        "--http", metavar="[HOST:]PORT", help="also serve MCP over streamable HTTP on 127.0.0.1:PORT (token required)"
    )
    parser.add_argument("--detach", action="store_true", help="run in the background; return once it answers")
    control = parser.add_mutually_exclusive_group()
    control.add_argument("--status", action="store_true", help="say whether a service runs for this store")
    control.add_argument("--stop", action="store_true", help="stop the service of this store")


def _add_mcp_parser(sub: Any) -> None:
    from kenning.mcpserver.options import CLIENTS, DEFAULT_HTTP_PORT, DEFAULT_MAX_BYTES, MIN_MAX_BYTES

    mcp = sub.add_parser("mcp", help="serve coding assistants over the Model Context Protocol (stdio)")
    mcp.add_argument("--allow-writes", action="store_true", help="also offer tools that add sources and index")
    mcp.add_argument(
        "--max-bytes",
        type=_answer_cap,
        default=DEFAULT_MAX_BYTES,
        help=f"cap on each answer's size in bytes (at least {MIN_MAX_BYTES}; default {DEFAULT_MAX_BYTES})",
    )
    mcp.add_argument(
        "--no-watch", action="store_true", help="do not follow changes to the sources while serving (see the README)"
    )
    mcp.add_argument("--print-config", choices=CLIENTS, help="print the JSON an assistant needs to start Kenning")
    _add_no_service(mcp)
    mcp.add_argument(
        "--http",
        nargs="?",
        const=str(DEFAULT_HTTP_PORT),
        metavar="[HOST:]PORT",
        help="serve MCP over streamable HTTP on 127.0.0.1:PORT from a service (every request needs the install's token)",
    )


# Every command's parser, in the order `kenning -h` lists them.
_COMMANDS: dict[str, Callable[[Any], None]] = {
    "gui": _add_gui_parser,
    "sources": _add_sources_parser,
    "index": _add_index_parser,
    "status": _add_status_parser,
    "search": _add_search_parser,
    "tags": _add_tags_parser,
    "links": _add_links_parser,
    "eval": _add_eval_parser,
    "models": _add_models_parser,
    "rebuild": _add_rebuild_parser,
    "store": _add_store_parser,
    "settings": _add_settings_parser,
    "mcp": _add_mcp_parser,
    "serve": _add_serve_parser,
    "completion": _add_completion_parser,
}


def main(
    argv: list[str] | None = None,
    open_gui: Callable[[Path | None], int] | None = None,
    session: ServedSession | None = None,
) -> int:
    """Run one command; open_gui(store_path) opens the desktop app (see kenning.launcher);
    session: inside the service, where the command's Workspace comes from (cli.served).

    Output goes through the terminal sanitiser (kenning.cli.terminal) for the whole
    command, argparse's messages included; a closed pipe ends quietly and a failed
    write (a full disk) in one line, like standard Unix tools.
    """
    from kenning.cli.terminal import OutputClosed, OutputFailed, safe_streams, silence

    with safe_streams():
        try:
            code = _run(argv, open_gui, session)
            sys.stdout.flush()
            return code
        except OutputClosed:
            silence(sys.stdout)
            return 141  # 128 + SIGPIPE, what a shell reports for a tool stopped by a closed pipe
        except OutputFailed as exc:
            silence(sys.stdout)
            _say_error(f"cannot write the output: {exc}")
            return 1


def _say_error(message: str) -> None:
    try:
        print(f"kenning: {message}", file=sys.stderr)
    except Exception:
        pass


def _run(
    argv: list[str] | None, open_gui: Callable[[Path | None], int] | None, session: ServedSession | None = None
) -> int:
    from kenning.cli.terminal import OutputClosed, OutputFailed

    args = parse_arguments(argv)
    args.open_gui = open_gui
    args.session = session
    if session is None:
        start_logging(verbose=args.verbose)  # the log's folder is found when a record needs it
    else:
        session.check(args)  # raises when the service leaves this command to the client
    from kenning.cli import commands

    handler = commands.HANDLERS[args.command or "gui"]
    try:
        return handler(args) or 0
    except (OutputClosed, OutputFailed):
        raise  # the output itself failed: main() says so, like a Unix tool
    except KeyboardInterrupt:
        print("\nkenning: interrupted; what was indexed so far is kept.", file=sys.stderr)
        return 130
    except Exception as exc:  # every failure becomes a message; unexpected ones are logged with their traceback
        message = report(exc, args.store, doing=f"running `kenning {args.command or 'gui'}`")
        print(f"kenning: {message}", file=sys.stderr)
        return 2 if is_expected(exc) else 1
    finally:
        commands.close_workspace(args)


if __name__ == "__main__":
    sys.exit(main())
