"""The MCP tools, declared on the SDK's MCPServer and run over stdio.

Each tool is a thin declaration (name, typed arguments, description for the
assistant) around a KenningService method; errors meant for the user become tool
errors carrying Kenning's own message.
"""

from __future__ import annotations

import functools
from typing import Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

from kenning import __version__
from kenning.mcpserver.service import KenningService
from kenning.workspace import report
from kenning.workspace.messages import is_expected

INSTRUCTIONS = (
    "Kenning searches the user's own notes and linked git repositories offline. Use `search` first "
    "(filters: source, path, tag, ext, after, before); each hit has an abs_path and a line range, and "
    "`read` returns a file's lines. `related` finds notes close in meaning to a file. Answers are "
    "capped in size; a `truncated` field says what was left out and how to get it."
)
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
Mode = Literal["hybrid", "lexical", "vector"]


def _user_errors(method):
    """A failure of the user's data or machine becomes a tool error worded for the user."""

    @functools.wraps(method)
    def wrapper(*args, **kwargs):
        try:
            return method(*args, **kwargs)
        except Exception as exc:
            if not is_expected(exc):
                raise  # a bug: the SDK logs its traceback and tells the client only that the tool failed
            raise ToolError(report(exc, doing=f"the MCP tool {method.__name__}")) from exc

    return wrapper


def build_server(service: KenningService) -> MCPServer:
    # WARNING: the SDK's per-request INFO lines would fill the assistant's server log;
    # Kenning's own log file keeps what matters.
    server = MCPServer("kenning", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")

    @_user_errors
    def search(
        query: str,
        limit: int = 10,
        mode: Mode = "hybrid",
        source: str | None = None,
        path: str | None = None,
        tag: str | None = None,
        ext: str | None = None,
        after: str | None = None,
        before: str | None = None,
        explain: bool = True,
    ) -> str:
        """Search the user's notes and code. Returns JSON: hits with source, path, abs_path, line range,
        title, snippet (matches in [[ ]]), score and, with explain, the ranking breakdown. The query
        accepts "phrases", -excluded words and key:value filters; the filter arguments do the same.
        after/before take dates (YYYY-MM-DD)."""
        filters = {"source": source, "path": path, "tag": tag, "ext": ext, "after": after, "before": before}
        return service.search(query, limit, mode, explain, **filters)

    @_user_errors
    def read(path: str, source: str | None = None, start_line: int = 1, end_line: int | None = None) -> str:
        """Read lines of an indexed file (a hit's abs_path, or its path plus source). Lines are numbered
        from 1; end_line is inclusive. Only files Kenning has indexed can be read."""
        return service.read(path, source, start_line, end_line)

    @_user_errors
    def related(path: str, source: str | None = None, limit: int = 10) -> str:
        """Documents nearest in meaning to an indexed file (needs the embedding model and vectors)."""
        return service.related(path, source, limit)

    @_user_errors
    def sources() -> str:
        """The indexed sources: name, folder, kind, document counts, when last indexed."""
        return service.sources()

    @_user_errors
    def status() -> str:
        """Index health: counts, vectors still pending, whether semantic search is complete, the model."""
        return service.status()

    for tool in (search, read, related, sources, status):
        server.add_tool(tool, annotations=READ_ONLY, structured_output=False)
    if service.allow_writes:
        _add_write_tools(server, service)
    return server


def _add_write_tools(server: MCPServer, service: KenningService) -> None:
    @_user_errors
    def add_source(path: str, git: bool = False, name: str | None = None) -> str:
        """Add a folder (or, with git=true, a git repository) as a source. Call index afterwards."""
        return service.add_source(path, git, name)

    @_user_errors
    def index(source: str | None = None, embed: bool = True) -> str:
        """Index every source, or one by name (embed=false: words only, much faster)."""
        return service.index(source, embed)

    server.add_tool(add_source, annotations=WRITES, structured_output=False)
    server.add_tool(index, annotations=WRITES, structured_output=False)


def run_stdio(service: KenningService) -> int:
    try:
        build_server(service).run("stdio")
    finally:
        service.close()
    return 0
