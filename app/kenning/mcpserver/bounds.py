"""Keeping every answer within a byte budget, and saying so when something was cut.

An assistant's context is precious: a tool answer is compact JSON of at most
`max_bytes` UTF-8 bytes. Lists are shortened from the end (the least relevant hits go
first; of several lists, the last named first), a file's text loses lines from its end,
and the answer states what was left out so the assistant can ask for the rest.
Everything here returns the answer as a dict, always whole JSON: the text an assistant
reads and the structured content a client checks against the tool's schema are the same.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from kenning.mcpserver.options import DEFAULT_MAX_BYTES, MIN_MAX_BYTES

__all__ = ["DEFAULT_MAX_BYTES", "MIN_MAX_BYTES", "dumps", "fit_lines", "fit_lists"]

LINE_NUMBER = "{number}\t"  # how `read` numbers its lines (as `cat -n` does, without the padding)


def dumps(payload: dict[str, Any]) -> str:
    """Compact JSON: no indentation, no spaces after separators (every byte is context)."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def encoded_size(payload: dict[str, Any]) -> int:
    return len(dumps(payload).encode("utf-8"))


def fit_lists(payload: dict[str, Any], keys: Sequence[str], max_bytes: int) -> dict[str, Any]:
    """payload with the lists at `keys` shortened (the last key first) until it fits."""
    if encoded_size(payload) <= max_bytes:
        return payload
    items = {key: list(payload[key]) for key in keys}
    kept = {key: len(items[key]) for key in keys}
    out = payload
    for key in reversed(keys):
        kept[key] = _longest_fitting(len(items[key]), _trying(payload, items, kept, key, max_bytes), max_bytes)
        out = _cut(payload, items, kept, max_bytes)
        if encoded_size(out) <= max_bytes:
            return out
    return _last_resort(out, max_bytes)


def _trying(
    payload: dict[str, Any], items: dict[str, list[Any]], kept: dict[str, int], key: str, max_bytes: int
) -> Callable[[int], dict[str, Any]]:
    """The payload keeping n items of one list, the others as they are now."""
    return lambda n: _cut(payload, items, {**kept, key: n}, max_bytes)


def _cut(payload: dict[str, Any], items: dict[str, list[Any]], kept: dict[str, int], max_bytes: int) -> dict[str, Any]:
    out = {**payload, **{key: items[key][: kept[key]] for key in items}}
    omitted = {key: len(items[key]) - kept[key] for key in items if kept[key] < len(items[key])}
    if omitted:
        out["truncated"] = {
            "reason": f"the answer is capped at {max_bytes} bytes",
            "shown": sum(kept.values()),
            "omitted": sum(omitted.values()),
            "hint": "ask for fewer results or a narrower query",
        }
        if len(items) > 1:
            out["truncated"]["lists"] = omitted
    return out


def fit_lines(
    payload: dict[str, Any], lines: list[str], first_line: int, max_bytes: int, *, numbered: bool = True
) -> dict[str, Any]:
    """payload plus as many of `lines` (numbered from first_line) as fit, as `text`."""
    if numbered:
        lines = [LINE_NUMBER.format(number=first_line + i) + line for i, line in enumerate(lines)]
    kept = _longest_fitting(len(lines), lambda n: _with_lines(payload, lines, first_line, n, max_bytes), max_bytes)
    return _last_resort(_with_lines(payload, lines, first_line, kept, max_bytes), max_bytes)


def _with_lines(
    payload: dict[str, Any], lines: list[str], first_line: int, kept: int, max_bytes: int
) -> dict[str, Any]:
    out = {**payload, "start_line": first_line, "end_line": first_line + kept - 1, "text": "".join(lines[:kept])}
    if kept < len(lines):
        out["truncated"] = {
            "reason": f"the answer is capped at {max_bytes} bytes",
            "omitted_lines": len(lines) - kept,
            "next_start_line": first_line + kept,
            "hint": "call read again with start_line set to next_start_line",
        }
    return out


def _longest_fitting(count: int, build: Callable[[int], dict[str, Any]], max_bytes: int) -> int:
    """Largest n in [0, count] whose built payload fits (sizes grow with n)."""
    low, high = 0, count
    while low < high:
        middle = (low + high + 1) // 2
        if encoded_size(build(middle)) <= max_bytes:
            low = middle
        else:
            high = middle - 1
    return low


def _last_resort(payload: dict[str, Any], max_bytes: int) -> dict[str, Any]:
    """The payload, or (when even its shortest form is too big: notes or a title of
    thousands of characters) the same with every long string cut, still whole JSON."""
    limit = max_bytes // 4
    while encoded_size(payload) > max_bytes and limit >= 8:
        payload = _cut_strings(payload, limit)
        limit //= 2
    return payload


def _cut_strings(value: Any, limit: int) -> Any:
    if isinstance(value, str):
        return value if len(value) <= limit else value[:limit] + "…"
    if isinstance(value, dict):
        return {key: _cut_strings(item, limit) for key, item in value.items()}
    if isinstance(value, list):
        return [_cut_strings(item, limit) for item in value]
    return value
