"""The lint gate: ruff's rules and formatter, as configured in pyproject.toml, find nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHECKED = ["app", "tests", "packaging"]


def _ruff(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args, *CHECKED], cwd=ROOT, capture_output=True, text=True, check=False
    )


def test_ruff_lint_finds_nothing():
    run = _ruff("check", "--no-cache")
    assert run.returncode == 0, run.stdout + run.stderr


def test_ruff_format_would_change_nothing():
    run = _ruff("format", "--check", "--no-cache")
    assert run.returncode == 0, run.stdout + run.stderr
