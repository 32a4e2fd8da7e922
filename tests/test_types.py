"""The type gate: mypy, as configured in pyproject.toml (strict on every package, the
desktop app checked with PySide6's stub gaps listed there), finds nothing; and the
configuration is what it says."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_mypy_finds_nothing():
    run = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_gate_is_strict_everywhere_and_the_app_is_checked():
    """Issue #22: no package escapes the checker (no ignore_errors), every package but the
    app is strict, and the app's exemptions are error codes named in one place."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    overrides = config["overrides"]
    assert not [o for o in overrides if o.get("ignore_errors")]
    strict = next(o for o in overrides if o["module"] == ["kenning", "kenning.*"])
    assert strict["disallow_untyped_defs"] and strict["warn_return_any"] and strict["disallow_any_generics"]
    gui = next(o for o in overrides if o["module"] == ["kenning.gui", "kenning.gui.*"])
    assert config["check_untyped_defs"] and set(gui["disable_error_code"]) == {
        "call-arg",
        "call-overload",
        "union-attr",
        "override",
    }
    pins = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert {d.split("==")[0] for d in pins["test"] if "==" in d} >= {"ruff", "mypy"}  # exact versions
