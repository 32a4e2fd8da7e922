"""Keeping every answer within a byte budget, and saying so when something was cut.

An assistant's context is precious: a tool answer is JSON of at most `max_bytes`
UTF-8 bytes. Lists are shortened from the end (the least relevant hits go first),
a file's text loses lines from its end, and the answer states what was left out so
the assistant can ask for the rest.
"""

from __future__ import annotations

import json

from kenning.mcpserver.options import DEFAULT_MAX_BYTES, MIN_MAX_BYTES

__all__ = ["DEFAULT_MAX_BYTES", "MIN_MAX_BYTES", "dumps", "fit_lines", "fit_list"]


def encoded_size(payload: dict) -> int:
    return len(dumps(payload).encode("utf-8"))


def dumps(payload: dict) -> str:
    return json.dumps(payload, ensure_ascii=False, indent=1)


def fit_list(payload: dict, key: str, max_bytes: int) -> str:
    """payload as JSON, keeping the longest prefix of payload[key] that fits."""
    items = list(payload[key])
    if encoded_size(payload) <= max_bytes:
        return dumps(payload)
    kept = _longest_fitting(len(items), lambda n: _with_items(payload, key, items, n, max_bytes), max_bytes)
    return _last_resort(_with_items(payload, key, items, kept, max_bytes), max_bytes)


def fit_lines(payload: dict, lines: list[str], first_line: int, max_bytes: int) -> str:
    """payload plus as many of `lines` (numbered from first_line) as fit, as `text`."""
    kept = _longest_fitting(len(lines), lambda n: _with_lines(payload, lines, first_line, n, max_bytes), max_bytes)
    return _last_resort(_with_lines(payload, lines, first_line, kept, max_bytes), max_bytes)


def _longest_fitting(count: int, build, max_bytes: int) -> int:
    """Largest n in [0, count] whose built payload fits (sizes grow with n)."""
    low, high = 0, count
    while low < high:
        middle = (low + high + 1) // 2
        if encoded_size(build(middle)) <= max_bytes:
            low = middle
        else:
            high = middle - 1
    return low


def _with_items(payload: dict, key: str, items: list, kept: int, max_bytes: int) -> dict:
    out = {**payload, key: items[:kept]}
    if kept < len(items):
        out["truncated"] = {
            "reason": f"the answer is capped at {max_bytes} bytes",
            "shown": kept,
            "omitted": len(items) - kept,
            "hint": "ask for fewer results, a narrower query, or explain=false",
        }
    return out


def _with_lines(payload: dict, lines: list[str], first_line: int, kept: int, max_bytes: int) -> dict:
    out = {**payload, "start_line": first_line, "end_line": first_line + kept - 1, "text": "".join(lines[:kept])}
    if kept < len(lines):
        out["truncated"] = {
            "reason": f"the answer is capped at {max_bytes} bytes",
            "omitted_lines": len(lines) - kept,
            "next_start_line": first_line + kept,
            "hint": "call read again with start_line set to next_start_line",
        }
    return out


def _last_resort(payload: dict, max_bytes: int) -> str:
    """The payload's JSON, or (when even the shortest form is too big) its cut text with a note."""
    text = dumps(payload)
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text
    note = f"\n[truncated: this answer was cut at {max_bytes} bytes; it is not complete JSON]"
    room = max(0, max_bytes - len(note.encode("utf-8")))
    return data[:room].decode("utf-8", "ignore") + note
