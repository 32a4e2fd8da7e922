"""Links as a graph: what a note links to, what links to it, what names it without a link.

One function for every front end (the CLI's `kenning links`, the app, the MCP server's
`backlinks` and `unresolved_links`): `LinkGraph.note(...)` and `LinkGraph.unresolved()`.
The store keeps links as written (store.links); they are resolved here, the way
Obsidian resolves them, within the note's own source (its vault):

1. a path relative to the note when it starts with `./` or `../`;
2. the path from the vault's top (`[[ops/Deploy]]`), then beside the note;
3. the one file whose path ends with it (`[[Deploy]]` is the one `Deploy.md` anywhere);
4. the one note with that alias (front matter `aliases:`).

`Deploy` also means `Deploy.md`; names compare without regard to case.  A name several
files (or aliases) share is *ambiguous*: it counts for none of them, and says which.
A link to a file Kenning does not index (an image, a video) cannot be checked and is
neither resolved nor reported as unresolved.
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from dataclasses import field
from typing import Literal

from kenning.core.fsnames import abs_path_in
from kenning.core.records import Record
from kenning.ingest.filetypes import classify
from kenning.ingest.obsidian import prose
from kenning.storage.api import ChunkText, LinkRow, NoteRow, Store

LinkStatus = Literal["resolved", "ambiguous", "unresolved"]
MAX_CONTEXT_CHARS = 200
MAX_MENTIONS = 50
MENTION_CANDIDATES = 500  # chunks the word index offers per name, checked for the exact wording
MIN_NAME_CHARS = 2
MAX_CANDIDATES_SHOWN = 5
_LINK_MARKUP = re.compile(r"!?\[\[[^\]\n]*\]\]|!?\[[^\]\n]*\]\([^)\n]*\)")
_NOT_NEWLINE = re.compile(r"[^\n]")


class NoteRef(Record, frozen=True):
    source: str
    path: str  # relative to the source's folder
    abs_path: str
    title: str


class Link(Record, frozen=True):
    origin: NoteRef  # the note that links
    line: int
    target: str  # as written, without #heading or |alias
    embed: bool
    status: LinkStatus
    to: NoteRef | None = None  # the note it names, when resolved
    candidates: tuple[str, ...] = ()  # ambiguous: paths it could name (the first few)
    context: str = ""  # the line it is on


class Mention(Record, frozen=True):
    origin: NoteRef  # the note that names the other without linking to it
    line: int
    name: str  # the note's name as said there (file name, title or alias)
    context: str


class NoteLinks(Record, frozen=True):
    note: NoteRef
    names: tuple[str, ...]  # what a mention may say: file name, title, aliases
    outgoing: list[Link] = field(default_factory=list)
    backlinks: list[Link] = field(default_factory=list)
    mentions: list[Mention] = field(default_factory=list)


def _ref(row: NoteRow) -> NoteRef:
    return NoteRef(row.source, row.rel_path, abs_path_in(row.root, row.rel_path), row.title)


class _Vault:
    """One source's files and aliases, looked up as Obsidian looks link targets up."""

    def __init__(self) -> None:
        self.by_path: dict[str, NoteRow] = {}
        self.by_name: dict[str, list[NoteRow]] = defaultdict(list)
        self.by_alias: dict[str, list[NoteRow]] = defaultdict(list)

    def add(self, row: NoteRow) -> None:
        lower = row.rel_path.lower()
        self.by_path[lower] = row
        self.by_name[posixpath.basename(lower)].append(row)

    def resolve(self, target: str, note_path: str) -> tuple[LinkStatus, list[NoteRow]]:
        wanted = target.replace("\\", "/").strip()
        note_dir = posixpath.dirname(note_path.lower())
        forms = [wanted.lower()] + ([] if wanted.lower().endswith(".md") else [wanted.lower() + ".md"])
        if wanted.startswith(("./", "../")):
            return self._one(self._beside(note_dir, forms))
        for form in forms:
            if (exact := self.by_path.get(form.lstrip("/"))) is not None:
                return "resolved", [exact]
        if found := self._beside(note_dir, forms):
            return "resolved", found[:1]
        for form in forms:
            tail = form.lstrip("/")
            ending = [r for r in self.by_name.get(posixpath.basename(tail), []) if _ends_with(r.rel_path, tail)]
            if ending:
                return self._one(ending)
        if "/" not in wanted:
            return self._one(self.by_alias.get(wanted.lower(), []))
        return "unresolved", []

    def _beside(self, note_dir: str, forms: list[str]) -> list[NoteRow]:
        for form in forms:
            joined = posixpath.normpath(posixpath.join(note_dir, form))
            if not joined.startswith("../") and (row := self.by_path.get(joined)) is not None:
                return [row]
        return []

    @staticmethod
    def _one(rows: list[NoteRow]) -> tuple[LinkStatus, list[NoteRow]]:
        unique = list({r.id: r for r in rows}.values())
        if not unique:
            return "unresolved", []
        return ("resolved" if len(unique) == 1 else "ambiguous"), unique


def _ends_with(rel_path: str, tail: str) -> bool:
    lower = rel_path.lower()
    return lower == tail or lower.endswith("/" + tail)


def _checkable(target: str) -> bool:
    """Whether an unresolved target could have been indexed: a note name, or a file of a
    type Kenning reads (an image or a video link is not Kenning's to judge)."""
    ext = posixpath.splitext(target)[1]
    return not ext or classify(target) is not None or not re.fullmatch(r"\.[A-Za-z0-9]{1,8}", ext)


class LinkGraph:
    """Every link of the store's notes, resolved once per version of the store."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self.version = store.version()
        self._notes = {row.id: row for row in store.links.notes()}
        self._vaults: dict[int, _Vault] = defaultdict(_Vault)
        for row in self._notes.values():
            self._vaults[row.source_id].add(row)
        self._aliases: dict[int, list[str]] = defaultdict(list)
        for doc_id, alias in store.links.aliases():
            if (named := self._notes.get(doc_id)) is not None:
                self._aliases[doc_id].append(alias)
                self._vaults[named.source_id].by_alias[alias.lower()].append(named)
        self._resolved: list[tuple[LinkRow, LinkStatus, list[NoteRow]]] = []
        self._into: dict[int, list[int]] = defaultdict(list)  # document id → indexes into _resolved
        self._from: dict[int, list[int]] = defaultdict(list)
        for link in store.links.links():
            origin = self._notes.get(link.document_id)
            if origin is None:
                continue
            status, rows = self._vaults[origin.source_id].resolve(link.target, origin.rel_path)
            index = len(self._resolved)
            self._resolved.append((link, status, rows))
            self._from[link.document_id].append(index)
            if status == "resolved":
                self._into[rows[0].id].append(index)

    def note(self, document_id: int, *, mentions: bool = True) -> NoteLinks:
        """What one document links to, what links to it and (mentions) what names it unlinked."""
        row = self._notes[document_id]
        names = self.names(document_id)
        outgoing = [self._link(i) for i in self._from.get(document_id, [])]
        into = [i for i in self._into.get(document_id, []) if self._resolved[i][0].document_id != document_id]
        backlinks = self._with_context(into)
        found = self._mentions(row, names) if mentions else []
        return NoteLinks(_ref(row), names, outgoing, backlinks, found)

    def names(self, document_id: int) -> tuple[str, ...]:
        row = self._notes[document_id]
        stem = posixpath.splitext(posixpath.basename(row.rel_path))[0]
        seen: dict[str, str] = {}
        for name in (stem, row.title, *self._aliases.get(document_id, [])):
            name = " ".join(name.split())
            if len(name) >= MIN_NAME_CHARS and re.search(r"\w", name):
                seen.setdefault(name.lower(), name)
        return tuple(seen.values())

    def unresolved(self, source: str | None = None) -> list[Link]:
        """Links that name no file (or several), of every note or of one source's."""
        out = [
            i
            for i, (link, status, _) in enumerate(self._resolved)
            if status != "resolved"
            and (source is None or self._notes[link.document_id].source == source)
            and (status == "ambiguous" or _checkable(link.target))
        ]
        return self._with_context(out)

    def _with_context(self, indexes: list[int]) -> list[Link]:
        texts = self._store.links.chunk_texts([self._resolved[i][0].chunk_id for i in indexes])
        return [self._link(i, texts.get(self._resolved[i][0].chunk_id)) for i in indexes]

    def _link(self, index: int, chunk: ChunkText | None = None) -> Link:
        link, status, rows = self._resolved[index]
        return Link(
            origin=_ref(self._notes[link.document_id]),
            line=link.line,
            target=link.target,
            embed=bool(link.embed),
            status=status,
            to=_ref(rows[0]) if status == "resolved" else None,
            candidates=tuple(r.rel_path for r in rows[:MAX_CANDIDATES_SHOWN]) if status == "ambiguous" else (),
            context=_line_of(chunk, link.line) if chunk is not None else "",
        )

    def _mentions(self, note: NoteRow, names: tuple[str, ...]) -> list[Mention]:
        """Chunks of the note's source that say one of its names outside links and code."""
        out: list[Mention] = []
        seen: set[tuple[int, int]] = set()
        for name in names:
            pattern = re.compile(r"(?<!\w)" + r"\s+".join(map(re.escape, name.split())) + r"(?!\w)", re.IGNORECASE)
            for chunk in self._store.links.chunks_saying(name, note.source_id, MENTION_CANDIDATES):
                if chunk.document_id == note.id or chunk.document_id not in self._notes:
                    continue
                text = _LINK_MARKUP.sub(lambda m: _NOT_NEWLINE.sub(" ", m.group()), prose(chunk.text))
                for match in pattern.finditer(text):
                    line = chunk.line_start + text.count("\n", 0, match.start())
                    if (chunk.document_id, line) in seen:
                        continue
                    seen.add((chunk.document_id, line))
                    origin = _ref(self._notes[chunk.document_id])
                    out.append(Mention(origin, line, chunk.text[match.start() : match.end()], _line_of(chunk, line)))
                    if len(out) >= MAX_MENTIONS:
                        return _in_order(out)
        return _in_order(out)


def _in_order(mentions: list[Mention]) -> list[Mention]:
    return sorted(mentions, key=lambda m: (m.origin.source, m.origin.path, m.line))


def _line_of(chunk: ChunkText, line: int) -> str:
    lines = chunk.text.split("\n")
    index = line - chunk.line_start
    text = " ".join(lines[index].split()) if 0 <= index < len(lines) else ""
    return text if len(text) <= MAX_CONTEXT_CHARS else text[: MAX_CONTEXT_CHARS - 1] + "…"
