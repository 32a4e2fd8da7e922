"""The `kenning` command: the CLI, which opens the desktop app when asked for no command.

It lives outside both `kenning.cli` and `kenning.gui` so that neither imports the
other (docs/architecture.md §1): the CLI receives a way to open the app instead.
"""

from __future__ import annotations

import gc
import sys
from pathlib import Path


def open_gui(store_path: Path | None) -> int:
    try:
        from kenning.gui.app import run_app
    except ImportError as exc:
        print(f"kenning: the desktop app is unavailable ({exc}); try `kenning --help`.", file=sys.stderr)
        return 2
    return run_app(store_path=store_path)


def main(argv: list[str] | None = None) -> int:
    """The process's entry point (tests call kenning.cli.main.main instead)."""
    from kenning.cli.main import main as cli_main

    code = cli_main(argv, open_gui=open_gui)
    # The process ends now.  Its last garbage collection would walk every object still
    # alive (every module, class and function imported) only to find them reachable:
    # ~10 ms of a 100 ms `kenning search` here.  Frozen objects are left out of it.
    gc.freeze()
    return code


if __name__ == "__main__":
    sys.exit(main())
