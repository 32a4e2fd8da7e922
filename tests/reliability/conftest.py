"""Prints what the reliability suite survived and tried (kill points, hostile files,
fuzzed queries) at the end of the run, so the figures can be quoted."""

from __future__ import annotations

from reliability.helpers import COUNTS, LONG


def pytest_terminal_summary(terminalreporter):
    if not COUNTS:
        return
    mode = "long (KENNING_LONG_TESTS=1)" if LONG else "short (CI)"
    terminalreporter.write_sep("-", f"kenning reliability counts, {mode} setting")
    for key in sorted(COUNTS):
        terminalreporter.write_line(f"{key}: {COUNTS[key]}")
