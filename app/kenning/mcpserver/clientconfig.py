"""The JSON snippet each assistant expects for starting `kenning mcp`.

Claude (Desktop's claude_desktop_config.json, Claude Code's .mcp.json) and Cursor
(.cursor/mcp.json) read `mcpServers`; VS Code (.vscode/mcp.json) reads `servers`
with an explicit `type`; Zed (its settings.json) reads `context_servers`. The command
is an absolute path: assistants start servers without the user's shell, so PATH may
not hold it.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kenning.mcpserver.options import CLIENTS


def server_command(argv0: str | None = None) -> list[str]:
    """The command line that starts this same Kenning: the bundle, the script, or the module."""
    if getattr(sys, "frozen", False):  # the one-folder bundle: the executable is Kenning
        return [sys.executable]
    argv0 = argv0 if argv0 is not None else sys.argv[0]
    name = Path(argv0).name
    if name.startswith("kenning") and not name.endswith(".py"):
        found = shutil.which(argv0) if os.sep not in argv0 else argv0
        if found and os.path.isfile(found):
            return [os.path.abspath(found)]
    return [sys.executable, "-m", "kenning.launcher"]


def client_config(client: str, *, store: str | None = None, argv0: str | None = None) -> dict[str, Any]:
    if client not in CLIENTS:
        raise ValueError(f"unknown client {client!r}; choose one of {', '.join(CLIENTS)}")
    command, *prefix = server_command(argv0)
    args = [*prefix]
    if store:
        args += ["--store", os.path.abspath(os.path.expanduser(store))]
    args.append("mcp")
    entry: dict[str, Any] = {"command": command, "args": args}
    env = _environment(module_form=bool(prefix))
    if env:
        entry["env"] = env
    if client == "vscode":
        return {"servers": {"kenning": {"type": "stdio", **entry}}}
    if client == "zed":
        # Zed tells its own extensions' servers from ones the user configured by "source";
        # some versions refuse an entry without it.
        return {"context_servers": {"kenning": {"source": "custom", **entry}}}
    return {"mcpServers": {"kenning": entry}}


def _environment(*, module_form: bool) -> dict[str, str]:
    """What the server must inherit to find the same store (and, run as a module, the same code)."""
    names = ["KENNING_HOME", "KENNING_MODEL"] + (["PYTHONPATH"] if module_form else [])
    return {name: os.environ[name] for name in names if os.environ.get(name)}


def print_config(client: str, *, store: str | None = None, write: Callable[..., object] = print) -> None:
    write(json.dumps(client_config(client, store=store), indent=2))
