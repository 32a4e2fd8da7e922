"""The `kenning` command: the CLI, which opens the desktop app when asked for no command.

It lives outside both `kenning.cli` and `kenning.gui` so that neither imports the
other (docs/architecture.md §1): the CLI receives a way to open the app instead.
"""

from __future__ import annotations

import gc
import sys

from kenning import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any  # the thin client path (serve.client) never loads pathlib


def service_handlers(warm: Any) -> dict[str, Any]:
    """What the service inside the app answers: the CLI's commands and MCP sessions.
    Composed here because the app may not import the CLI (docs/architecture.md §1)."""
    from kenning.cli.serving import handlers_for

    return handlers_for(warm)


def open_gui(store_path: Path | None) -> int:
    try:
        from kenning.gui.app import run_app
    except ImportError as exc:
        print(f"kenning: the desktop app is unavailable ({exc}); try `kenning --help`.", file=sys.stderr)
        return 2
    return run_app(store_path=store_path, service_handlers=service_handlers)


def gui_main() -> int:
    """The kenning-gui script: the app, with its service."""
    from kenning.gui.app import main as app_main

    return app_main(service_handlers=service_handlers)


def main(argv: list[str] | None = None) -> int:
    """The process's entry point (tests call kenning.cli.main.main instead).

    A command a running service answers (search, status; `mcp` as a bridge) is sent
    to it first, before anything else of Kenning is imported (kenning.serve.client);
    without a service it runs here, as it always did.
    """
    # Importing the CLI makes ~100k objects that live as long as the process: the
    # collector walked them over and over meanwhile (~35 collections, 7-9 ms of a
    # lexical search).  It starts after the imports, and leaves what they made out.
    gc.disable()
    from kenning.serve.client import run as run_served

    args = sys.argv[1:] if argv is None else argv
    code = run_served(args)
    if code is not None:
        return code
    from kenning.cli.main import main as cli_main

    gc.freeze()
    gc.enable()
    code = cli_main(argv, open_gui=open_gui)
    # The process ends now.  Its last garbage collection would walk every object still
    # alive (every module, class and function imported) only to find them reachable:
    # ~10 ms of a 100 ms `kenning search` here.  Frozen objects are left out of it.
    gc.freeze()
    return code


if __name__ == "__main__":
    sys.exit(main())
