"""The MCP tools, declared on the SDK's MCPServer and run over stdio.

Each tool is a thin declaration (name, typed and bounded arguments, a description for
the assistant, the schema of its answer) around a KenningService method. An answer is
sent twice over, as MCP asks of structured tools: compact JSON text for the model, and
the same object as `structuredContent`, checked against the tool's `outputSchema`.
Errors meant for the user become tool errors carrying Kenning's own message.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from kenning import TYPE_CHECKING, __version__
from kenning.core.types import SEARCH_MODES
from kenning.mcpserver import bounds, schema
from kenning.mcpserver.options import MAX_LIMIT
from kenning.mcpserver.service import KenningService
from kenning.search.fusion import RELATED_TO_DOCUMENT_LIMIT
from kenning.workspace import report
from kenning.workspace.messages import is_expected

if TYPE_CHECKING:
    from kenning.core.types import SearchMode

INSTRUCTIONS = (
    "Kenning searches the user's own notes and linked git repositories offline. Use `search` first "
    "(filters: source, path, tag, ext, after, before); each hit has an abs_path and a line range, and "
    "`read` returns a file's numbered lines. `related` finds notes close in meaning to a file; "
    "`backlinks` lists the notes linking to a note (and naming it without a link); `unresolved_links` "
    "lists links to notes that do not exist. The index follows file changes while the server runs: "
    "every answer's `index.updated` says when it last changed. Answers are capped in size; a "
    "`truncated` field says what was left out and how to get it."
)
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
if TYPE_CHECKING:
    Mode = SearchMode
else:
    Mode = Literal[SEARCH_MODES]  # core.types' alias is the checker's; the SDK reads this one (the schema)
Limit = Annotated[int, Field(ge=1, le=MAX_LIMIT, description=f"how many results, 1 to {MAX_LIMIT}")]
SearchLimit = Annotated[
    int | None,
    Field(
        ge=1, le=MAX_LIMIT, description=f"how many hits, 1 to {MAX_LIMIT} (default: the user's result-count setting)"
    ),
]
Line = Annotated[int, Field(ge=1, description="a line number, from 1")]


def _answered(model: type, method: Callable[..., dict[str, Any]]) -> Callable[..., CallToolResult]:
    """A tool returning `model`: the service's dict as text and structured content, and
    a failure of the user's data or machine as a tool error worded for the user."""

    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Annotated[CallToolResult, model]:
        try:
            payload = method(*args, **kwargs)
        except Exception as exc:
            if not is_expected(exc):
                raise  # a bug: the SDK logs its traceback and tells the client only that the tool failed
            raise ToolError(report(exc, doing=f"the MCP tool {method.__name__}")) from exc
        return CallToolResult(content=[TextContent(text=bounds.dumps(payload))], structured_content=payload)

    wrapper.__annotations__["return"] = Annotated[CallToolResult, model]
    return wrapper


def build_server(service: KenningService) -> MCPServer:
    # WARNING: the SDK's per-request INFO lines would fill the assistant's server log;
    # Kenning's own log file keeps what matters.
    server = MCPServer("kenning", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")

    def search(
        query: str,
        limit: SearchLimit = None,
        mode: Mode = "hybrid",
        source: str | None = None,
        path: str | None = None,
        tag: str | None = None,
        ext: str | None = None,
        after: str | None = None,
        before: str | None = None,
        explain: bool = False,
    ) -> dict[str, Any]:
        """Search the user's notes and code. Returns hits with source, path, abs_path, line range, title,
        snippet (the text as written; the matched words' character offsets are in `spans`), score, and
        `mode`: the mode that answered (hybrid waits a few seconds for the model, then says it answered on
        keywords). explain=true adds each score's breakdown (large). The query accepts "phrases",
        -excluded words and key:value filters; the filter arguments do the same. after/before take dates
        (YYYY-MM-DD)."""
        filters = {"source": source, "path": path, "tag": tag, "ext": ext, "after": after, "before": before}
        return service.search(query, limit, mode, explain, **filters)

    def read(
        path: str,
        source: str | None = None,
        start_line: Line = 1,
        end_line: Line | None = None,
        line_numbers: bool = True,
    ) -> dict[str, Any]:
        """Read lines of an indexed file (a hit's abs_path, or its path plus source). Lines are numbered
        from 1 and end_line is inclusive; each line of `text` starts with its number and a tab unless
        line_numbers=false. A range past the end or backwards is an error. Only files Kenning has indexed
        can be read."""
        return service.read(path, source, start_line, end_line, line_numbers)

    def related(path: str, source: str | None = None, limit: Limit = RELATED_TO_DOCUMENT_LIMIT) -> dict[str, Any]:
        """Documents nearest in meaning to an indexed file (needs the embedding model and vectors)."""
        return service.related(path, source, limit)

    def backlinks(path: str, source: str | None = None, mentions: bool = True) -> dict[str, Any]:
        """A note's links as a graph: the notes linking to it ([[wiki links]], ![[embeds]], markdown links,
        by name, path or alias), what it links to (resolved or not), and with mentions=true the notes that
        say its name (file name, title or alias) without linking to it."""
        return service.backlinks(path, source, mentions)

    def unresolved_links(source: str | None = None) -> dict[str, Any]:
        """Links naming no indexed note, or a name several notes share (with the candidates), in every
        source or one. Links to files Kenning does not index (images, video) are not judged."""
        return service.unresolved_links(source)

    def sources() -> dict[str, Any]:
        """The indexed sources: name, folder, kind, document counts, when last indexed."""
        return service.sources()

    def status() -> dict[str, Any]:
        """Index health: counts, vectors still pending, whether semantic search is complete, the model."""
        return service.status()

    tools: list[tuple[Callable[..., dict[str, Any]], type]] = [
        (search, schema.SearchAnswer),
        (read, schema.ReadAnswer),
        (related, schema.RelatedAnswer),
        (backlinks, schema.BacklinksAnswer),
        (unresolved_links, schema.UnresolvedAnswer),
        (sources, schema.SourcesAnswer),
        (status, schema.StatusAnswer),
    ]
    for tool, model in tools:
        server.add_tool(_answered(model, tool), annotations=READ_ONLY)
    if service.allow_writes:
        _add_write_tools(server, service)
    return server


def _add_write_tools(server: MCPServer, service: KenningService) -> None:
    def add_source(path: str, git: bool = False, name: str | None = None) -> dict[str, Any]:
        """Add a folder (or, with git=true, a git repository) as a source. Call index afterwards."""
        return service.add_source(path, git, name)

    def index(source: str | None = None, embed: bool = True) -> dict[str, Any]:
        """Index every source, or one by name (embed=false: words only, much faster)."""
        return service.index(source, embed)

    server.add_tool(_answered(schema.AddSourceAnswer, add_source), annotations=WRITES)
    server.add_tool(_answered(schema.IndexAnswer, index), annotations=WRITES)


def run_stdio(service: KenningService) -> int:
    try:
        build_server(service).run("stdio")
    finally:
        service.close()
    return 0
