"""`kenning mcp` as the launcher calls it: print a client's config, or serve over stdio."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kenning.core.types import Hit
    from kenning.workspace import Workspace


def main(args: argparse.Namespace, workspace: Workspace, record: Callable[[Hit, bool], dict[str, Any]]) -> int:
    """workspace: the store and model the CLI resolved; record: its hit → JSON record function."""
    if args.print_config == "http":
        from kenning.mcpserver.transport import print_http_config

        print_http_config(Path(workspace.store_path), args.http)
        return 0
    if args.print_config:
        from kenning.mcpserver.clientconfig import print_config

        print_config(args.print_config, store=args.store)
        return 0
    if sys.stdin.isatty():
        # Started by hand: the protocol would wait silently for JSON on stdin.
        print(
            "kenning mcp: serving MCP over stdio (an assistant starts this; see "
            "`kenning mcp --print-config claude|cursor|vscode|zed`). Ctrl-C stops it.",
            file=sys.stderr,
        )
    from kenning.mcpserver.server import run_stdio
    from kenning.mcpserver.service import KenningService

    service = KenningService(
        workspace, record, max_bytes=args.max_bytes, allow_writes=args.allow_writes, watch=not args.no_watch
    )
    return run_stdio(service)
