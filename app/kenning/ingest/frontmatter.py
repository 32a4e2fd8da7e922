"""YAML front matter: metadata for the document, never a chunk boundary.

Notes are written by hand, and `title: Postgres: tuning notes` is not valid YAML (the
second colon). When YAML refuses a block, its simple top-level `key: value` lines (and
`- item` lists under a key) are read one by one instead, so one such line loses
nothing; `problem` says what happened, for the indexer's log. A block where not even
that finds a key leaves the whole text as body (the user still finds their words) and
the metadata empty.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import field
from typing import Any

import yaml

from kenning.core.records import Record

_OPEN = re.compile(r"---[ \t]*(?:\n|\Z)")
_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.MULTILINE)
_TAG_SPLIT = re.compile(r"[,\s]+")
_HASH_TAG = re.compile(r"#[^\s#]")

_TITLE_KEYS = ("title",)
_ALIAS_KEYS = ("aliases", "alias")  # Obsidian's other names of a note
_TAG_KEYS = ("tags", "tag", "keywords")
_DATE_KEYS = ("date", "created", "created_at")
_UPDATED_KEYS = ("updated", "modified", "lastmod", "last_modified", "updated_at")


class FrontMatter(Record, frozen=True):
    meta: dict[str, Any] = field(default_factory=dict)
    body: str = ""
    body_line_offset: int = 0  # lines the front matter block took (0 when none)
    title: str | None = None
    aliases: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    date: float | None = None  # epoch seconds, UTC
    updated: float | None = None
    problem: str | None = None  # why the block was not read as YAML (None when it was)


def parse_front_matter(text: str) -> FrontMatter:
    """Split `text` into front matter metadata and body. Never raises."""
    block = _find_block(text)
    if block is None:
        return FrontMatter(body=text)
    yaml_text, body, offset = block
    meta, problem = _load_mapping(yaml_text)
    if meta is None:
        return FrontMatter(body=text, problem=problem)
    return FrontMatter(
        problem=problem,
        meta=meta,
        body=body,
        body_line_offset=offset,
        title=_title(meta),
        aliases=_aliases(meta),
        tags=_tags(meta),
        date=_first_time(meta, _DATE_KEYS),
        updated=_first_time(meta, _UPDATED_KEYS),
    )


def _find_block(text: str) -> tuple[str, str, int] | None:
    """(yaml text, body, lines taken) when text opens with a closed `---` block."""
    text_start = 1 if text.startswith("\ufeff") else 0
    opening = _OPEN.match(text, text_start)
    if opening is None:
        return None
    closing = _CLOSE.search(text, opening.end())
    if closing is None:
        return None
    yaml_text = text[opening.end() : closing.start()]
    after = closing.end()
    if after < len(text) and text[after] == "\n":
        after += 1
    # Lines taken = newlines consumed (the closing line's own newline included).
    offset = text.count("\n", 0, after)
    if after == len(text) and not text.endswith("\n"):
        offset += 1  # closing line is the file's last line, without a newline
    return yaml_text, text[after:], offset


# Real front matter is a few lines; a huge or deeply nested block is not metadata
# and PyYAML needs seconds to refuse it.
MAX_FRONT_MATTER_CHARS = 64 * 1024
MAX_NESTING = 32


def _too_nested(yaml_text: str) -> bool:
    depth = 0
    for ch in yaml_text:
        if ch in "[{":
            depth += 1
            if depth > MAX_NESTING:
                return True
        elif ch in "]}":
            depth = max(0, depth - 1)
    return False


class _Loader(yaml.SafeLoader):
    """SafeLoader whose impossible dates (`2024-02-30`) stay text instead of failing the block.

    `date: not a date` only loses the date; a mistyped day must not lose the title and
    tags as well (to_epoch reads the text, and gives None for it)."""

    def construct_yaml_timestamp(self, node: yaml.ScalarNode) -> Any:
        try:
            return super().construct_yaml_timestamp(node)
        except (ValueError, OverflowError):
            return self.construct_scalar(node)


_Loader.add_constructor("tag:yaml.org,2002:timestamp", _Loader.construct_yaml_timestamp)


def _load_mapping(yaml_text: str) -> tuple[dict[str, Any] | None, str | None]:
    """(metadata or None when the block is not front matter, what went wrong if anything)."""
    if len(yaml_text) > MAX_FRONT_MATTER_CHARS or _too_nested(yaml_text):
        return None, "front matter too large or too deeply nested: left as text"
    try:
        loaded = yaml.load(yaml_text, Loader=_Loader)
    except Exception as exc:  # YAMLError, and whatever else a hostile block provokes
        meta = _simple_lines(yaml_text)
        if not meta:
            return None, f"front matter is not valid YAML ({_yaml_problem(exc)}): left as text"
        return meta, f"front matter is not valid YAML ({_yaml_problem(exc)}): read line by line"
    if loaded is None:
        return {}, None  # an empty block is still front matter
    if not isinstance(loaded, dict):
        return None, None  # a `---` fenced paragraph, not metadata
    meta = {str(key): value for key, value in loaded.items()}
    return _hash_tags(meta, yaml_text), None


def _hash_tags(meta: dict[str, Any], yaml_text: str) -> dict[str, Any]:
    """`tags: #ops #db` is a YAML comment (the value is empty), but the words are what the
    author meant as tags: an empty tag key takes its line as written when it opens with a
    tag (`# a remark`, with its space, stays a comment)."""
    empty = [key for key in _TAG_KEYS if key in meta and meta[key] is None]
    if empty:
        written = _simple_lines(yaml_text)
        meta.update({key: written[key] for key in empty if _HASH_TAG.match(str(written.get(key) or ""))})
    return meta


def _yaml_problem(exc: Exception) -> str:
    # PyYAML's own wording and position; never the note's text (the log may be shown raw).
    problem = getattr(exc, "problem", None) or type(exc).__name__
    mark = getattr(exc, "problem_mark", None)
    return f"{problem}, line {mark.line + 1}" if mark is not None else str(problem)


_SIMPLE_KEY = re.compile(r"([A-Za-z_][\w.-]*)[ \t]*:(?:[ \t]+(.*))?")
_LIST_ITEM = re.compile(r"[ \t]+-[ \t]+(.*)|-[ \t]+(.*)")


def _simple_lines(yaml_text: str) -> dict[str, Any]:
    """Top-level `key: value` lines (the value taken whole, colons and all) and
    `- item` lines under a key with no value; indented lines (a value continued, a
    nested block) and comments are passed over.  A line of anything else at the margin
    means the block is prose between two `---` rules, not metadata: nothing is read
    (the text stays searchable as body)."""
    meta: dict[str, Any] = {}
    listing: str | None = None  # the key whose `- item` lines follow
    for line in yaml_text.splitlines():
        item = _LIST_ITEM.fullmatch(line.rstrip())
        if item and listing is not None:
            meta[listing].append(_unquote(item.group(1) or item.group(2) or ""))
            continue
        listing = None
        pair = _SIMPLE_KEY.fullmatch(line.rstrip())
        if pair is None:
            if line.strip() and not line[0].isspace() and not line.startswith("#"):
                return {}
            continue
        key, raw = pair.group(1), (pair.group(2) or "").strip()
        if not raw:
            meta[key], listing = [], key
            continue
        value = _simple_value(raw)
        if value is not None:
            meta[key] = value
    return {key: (value or None) if isinstance(value, list) else value for key, value in meta.items()}


def _simple_value(raw: str) -> str | list[str] | None:
    """A quoted or plain scalar, or a one-line `[a, b]` list; None for what needs real YAML."""
    if raw.startswith("["):
        if not raw.endswith("]"):
            return None
        return [_unquote(word) for word in raw[1:-1].split(",") if word.strip()]
    if raw.startswith(("{", "|", ">", "&", "*", "!")):
        return None
    return _unquote(raw)


def _unquote(raw: str) -> str:
    raw = raw.strip()
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
        return raw[1:-1]
    return raw


def _title(meta: dict[str, Any]) -> str | None:
    for key in _TITLE_KEYS:
        value = meta.get(key)
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            title = str(value).strip()
            if title:
                return title
    return None


MAX_ALIASES = 32
MAX_ALIAS_CHARS = 200


def _aliases(meta: dict[str, Any]) -> tuple[str, ...]:
    """`aliases: [Shipping checklist, DK]` (or one name, or names separated by commas, as
    older Obsidian wrote them): each a whole name, spaces kept, in the author's order."""
    seen: dict[str, None] = {}
    for key in _ALIAS_KEYS:
        value = meta.get(key)
        if isinstance(value, (list, tuple)):
            items = list(value)
        elif isinstance(value, str):
            items = value.split(",")
        else:
            items = []
        for item in items:
            if isinstance(item, (str, int, float)) and not isinstance(item, bool):
                alias = " ".join(str(item).split())[:MAX_ALIAS_CHARS]
                if alias and alias.lower() not in {a.lower() for a in seen}:
                    seen.setdefault(alias, None)
    return tuple(seen)[:MAX_ALIASES]


def with_parents(tag: str) -> list[str]:
    """A nested tag and the tags it is nested in: `project/beta` is also `project`, as
    Obsidian's search reads it (front matter and inline #tags alike)."""
    parts = [part for part in tag.strip("/").split("/") if part]
    return ["/".join(parts[:depth]) for depth in range(1, len(parts) + 1)]


def _tags(meta: dict[str, Any]) -> tuple[str, ...]:
    seen: dict[str, None] = {}  # ordered set: keep the author's order
    for key in _TAG_KEYS:
        for raw in _tag_words(meta.get(key)):
            for tag in with_parents(raw.strip().lstrip("#").strip().lower()):
                seen.setdefault(tag, None)
    return tuple(seen)


def _tag_words(value: Any) -> list[str]:
    if value is None or isinstance(value, bool):
        return []
    if isinstance(value, (list, tuple, set)):
        words: list[str] = []
        for item in value:
            if isinstance(item, (str, int, float)) and not isinstance(item, bool):
                words.extend(_TAG_SPLIT.split(str(item)))
        return words
    if isinstance(value, (str, int, float)):
        return _TAG_SPLIT.split(str(value))
    return []


def _first_time(meta: dict[str, Any], keys: tuple[str, ...]) -> float | None:
    for key in keys:
        if key in meta:
            stamp = to_epoch(meta[key])
            if stamp is not None:
                return stamp
    return None


def to_epoch(value: Any) -> float | None:
    """Epoch seconds (UTC) for YAML dates, datetimes, ISO strings or numbers."""
    try:
        if isinstance(value, bool):
            return None
        if isinstance(value, (int, float)):
            return float(value)
        if isinstance(value, dt.datetime):
            return _aware(value).timestamp()
        if isinstance(value, dt.date):
            return dt.datetime(value.year, value.month, value.day, tzinfo=dt.timezone.utc).timestamp()
        if isinstance(value, str):
            return _parse_iso(value.strip())
    except (ValueError, OverflowError, OSError):
        return None
    return None


def _parse_iso(text: str) -> float | None:
    if not text:
        return None
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"  # Python 3.10's fromisoformat rejects "Z"
    try:
        return _aware(dt.datetime.fromisoformat(text)).timestamp()
    except ValueError:
        pass
    try:
        day = dt.date.fromisoformat(text[:10])
    except ValueError:
        return None
    return dt.datetime(day.year, day.month, day.day, tzinfo=dt.timezone.utc).timestamp()


def _aware(moment: dt.datetime) -> dt.datetime:
    # Naive front matter times are read as UTC: the note carries no zone, and the local
    # zone of whichever machine indexes it would make the index machine-dependent.
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.timezone.utc)
