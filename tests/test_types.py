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


def _checker_only_literals(path: Path) -> dict[str, tuple[str, ...]]:
    """The `Name = Literal[...]` aliases a module defines under `if TYPE_CHECKING:`."""
    import ast

    found = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
            for stmt in node.body:
                if (
                    isinstance(stmt, ast.Assign)
                    and isinstance(stmt.value, ast.Subscript)
                    and getattr(stmt.value.value, "id", "") == "Literal"
                ):
                    values = ast.literal_eval(stmt.value.slice)
                    found[stmt.targets[0].id] = values if isinstance(values, tuple) else (values,)
    return found


def test_the_run_time_tuples_hold_their_literal_aliases_values():
    """Issue #27: the Literal aliases exist for the checker only (importing typing costs a
    quick command ~4%); the tuples the code reads at run time hold the same values, and
    mypy checks each tuple's values belong to the alias, this the other way round."""
    from kenning.core import types
    from kenning.storage import api

    app = ROOT / "app" / "kenning"
    core = _checker_only_literals(app / "core" / "types.py")
    storage = _checker_only_literals(app / "storage" / "api.py")
    assert core["SearchMode"] == types.SEARCH_MODES
    assert core["Fusion"] == types.FUSIONS
    assert set(types.FUZZY_LAYERS + types.CORRECTED_LAYERS) < set(core["Layer"])
    assert storage["LexicalIndex"] == api.LEXICAL_INDEXES
