"""The shape of every MCP answer, published to clients as each tool's `outputSchema`.

The answers themselves are built as plain dicts (service.py, workspace/answers.py); the
SDK checks each one against its model here before it is sent, so a field the schema
does not describe, or one missing, fails a test rather than an assistant.  Records that
may grow (a hit, a source) allow extra fields within a version.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from kenning.core.types import PROSE_WORDS


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class IndexState(BaseModel):
    """How fresh the index is (every answer carries it)."""

    updated: str | None = Field(
        description="when the store last changed (UTC, ISO 8601): a full index run or a watched change"
    )
    watching: bool = Field(description="whether the server follows changes to the sources as they happen")
    checking: bool = Field(
        False, description="the server is still checking the sources for changes made before it started"
    )
    changes_pending: bool = Field(
        False, description="changed files were heard and are being indexed (within about a second)"
    )
    notes: list[str] = Field(default_factory=list, description="why the index may be stale")


class Truncated(_Open):
    reason: str
    hint: str
    shown: int | None = None
    omitted: int | None = None
    lists: dict[str, int] | None = Field(None, description="per list: how many items were left out")
    omitted_lines: int | None = None
    next_start_line: int | None = None


class _Answer(BaseModel):
    version: int = Field(description="the answer format's version (raised when a field is renamed or removed)")
    index: IndexState
    truncated: Truncated | None = None


class Hit(_Open):
    chunk_id: int
    source: str
    path: str = Field(description="relative to the source's folder")
    abs_path: str = Field(description="the file: pass it to `read`")
    title: str = Field(description="heading path (A > B) or file and symbol")
    line_start: int
    line_end: int
    location: str = Field(description='"p. 12", "cell 3" in a PDF or notebook; "" for text files')
    snippet: str = Field(description="the text as written; matched words are at `spans`")
    spans: list[list[int]] = Field(description="[start, end) character offsets into snippet of each matched word")
    score: float = Field(
        description="the evidence on a 0-1 scale, 1 = the best possible (first in every list the search ran)"
    )
    layer: str = Field(description="the ranking that placed it: linear, rrf, …-fuzzy, …-corrected, filter")
    meaning_only: bool = Field(description="found by meaning alone: no word of the query occurs in it")
    lacks_phrases: bool = Field(
        False,
        description="it does not hold the query's quoted phrases, which were not required of every hit: listed"
        f" after every hit holding them, or (a question of more than {PROSE_WORDS} words: quotes are quotation)"
        " ranked as words",
    )
    obsidian_url: str | None = None
    breakdown: dict[str, Any] | None = Field(None, description="the score's parts (explain=true only)")


class SearchAnswer(_Answer):
    query: str
    mode: str = Field(description="the mode that answered: hybrid, vector or lexical (keywords only)")
    layer: str
    notes: list[str] = Field(description="why the answer differs from the request (model loading, unknown source…)")
    notice: str | None = Field(
        None,
        description='what was searched when it was not what was typed: "No note contains "…"; showing results'
        ' for its words", corrected words (null otherwise)',
    )
    corrections: dict[str, str] = Field(description="words searched as the words they most likely mean")
    did_you_mean: str | None
    hits: list[Hit]


class ReadAnswer(_Answer):
    source: str
    path: str
    abs_path: str
    total_lines: int
    start_line: int
    end_line: int
    numbered: bool = Field(description='each line of text starts with its number and a tab ("12\\t…")')
    text: str
    note: str | None = None


class RelatedDocument(_Open):
    source: str
    path: str
    abs_path: str
    title: str
    line: int = Field(description="first line of the file's closest chunk")
    similarity: float


class RelatedAnswer(_Answer):
    source: str
    path: str
    notes: list[str]
    related: list[RelatedDocument]


class Note(_Open):
    source: str
    path: str
    abs_path: str
    title: str


class LinkOut(_Open):
    line: int
    target: str = Field(description="as written, without #heading or |alias")
    embed: bool
    status: str = Field(description="resolved, ambiguous (several notes have that name) or unresolved")
    to: Note | None = None
    candidates: list[str] | None = None


class LinkIn(Note, LinkOut):
    context: str | None = Field(None, description="the line the link is on")


class Mention(Note):
    line: int
    name: str
    context: str


class BacklinksAnswer(_Answer):
    note: Note
    names: list[str] = Field(description="what a mention may say: the file name, the title, the aliases")
    outgoing: list[LinkOut]
    backlinks: list[LinkIn]
    mentions: list[Mention] = Field(description="unlinked mentions: the note's names said without a link")


class UnresolvedAnswer(_Answer):
    unresolved: list[LinkIn]


class SourceRecord(_Open):
    name: str
    kind: str
    root: str
    enabled: bool
    last_indexed: str | None
    documents: int
    chunks: int
    vectors_pending: int
    skipped_files: int


class SourcesAnswer(_Answer):
    sources: list[SourceRecord]


class SkippedFile(_Open):
    source: str
    path: str
    reason: str
    detail: str


class StatusAnswer(_Answer, _Open):
    """The record of `kenning status --json`, and what this server knows besides."""

    store: str
    size_bytes: int
    model: str
    log: str | None
    documents: int
    chunks: int
    vectors_pending: int
    semantic: str = Field(description="how complete semantic search is, in words")
    semantic_eta_seconds: float | None
    sources: list[SourceRecord]
    skipped_files: int
    skipped: list[SkippedFile] = Field(description="the first 50 files not indexed, with the reason")
    model_state: str = Field(description="loading, ready or failed")
    model_error: str | None
    semantic_search_complete: bool
    writes_allowed: bool
    max_bytes_per_answer: int


class AddSourceAnswer(_Answer):
    added: str
    kind: str
    root: str
    next: str


class IndexReportRecord(_Open):
    source: str
    files_seen: int
    added: int
    changed: int
    removed: int
    skipped: int
    errors: list[str]


class IndexAnswer(_Answer):
    reports: list[IndexReportRecord]
