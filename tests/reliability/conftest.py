"""Prints what the reliability suite survived and tried (kill points, hostile files,
fuzzed queries, refused attacks, kept data, failing output streams) at the end of the
run, so the figures can be quoted.  Keys named "category: what" are also totalled per
category (security, data-loss, streams)."""

from __future__ import annotations

from reliability.helpers import CATEGORIES, COUNTS, LONG


def pytest_terminal_summary(terminalreporter):
    if not COUNTS:
        return
    mode = "long (KENNING_LONG_TESTS=1)" if LONG else "short (CI)"
    terminalreporter.write_sep("-", f"kenning reliability counts, {mode} setting")
    for key in sorted(COUNTS):
        terminalreporter.write_line(f"{key}: {COUNTS[key]}")
    totals = {c: sum(n for k, n in COUNTS.items() if k.startswith(f"{c}:")) for c in CATEGORIES}
    if any(totals.values()):
        terminalreporter.write_line("totals: " + ", ".join(f"{c} {n}" for c, n in totals.items()))
