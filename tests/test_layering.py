"""docs/architecture.md §1: which kenning package may import which, checked on the source."""

import ast
from pathlib import Path

import pytest

from kenning_testing import docstring_ids

PACKAGE = Path(__file__).parent.parent / "app" / "kenning"
ALLOWED = {
    "core": set(),
    "storage": {"core"},
    "embedding": {"core"},
    "gitinfo": {"core"},
    "ingest": {"core", "storage", "embedding", "gitinfo"},
    "search": {"core", "storage", "embedding"},
    # The application layer: the only door from a front end to the store (docs/architecture.md §2).
    "workspace": {"core", "storage", "embedding", "gitinfo", "ingest", "search"},
    # Front ends: never storage (nor SQL) directly; sources, settings, errors go through workspace.
    # The CLI's `eval` builds a throwaway store of its own, hence ingest.
    "cli": {"core", "embedding", "ingest", "search", "workspace", "mcpserver", "serve"},
    "gui": {"core", "embedding", "search", "workspace", "serve"},
    # A front end like the CLI (`kenning mcp` dispatches to it and hands it the hit record);
    # its sessions also run inside the service (mcpserver.transport).
    "mcpserver": {"core", "embedding", "search", "workspace", "serve"},
    # The service (`kenning serve`): the socket, protocol and warm state.  The commands it
    # answers are handed to it by its host (cli.serving), so it imports no front end.
    "serve": {"core", "embedding", "search", "workspace"},
}
FRONT_ENDS = ("cli", "gui", "mcpserver", "serve")
QT = ("PySide6", "PyQt5", "PyQt6", "shiboken6")


def _imports(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_layer_imports_only_what_it_may(layer):
    wrong = []
    for path in (PACKAGE / layer).rglob("*.py"):
        for name in _imports(path):
            parts = name.split(".")
            if parts[0] == "kenning" and len(parts) > 1 and parts[1] in ALLOWED:
                target = parts[1]
                if target != layer and target not in ALLOWED[layer]:
                    wrong.append(f"{path.relative_to(PACKAGE)} imports {name}")
            if parts[0] in QT and layer != "gui":
                wrong.append(f"{path.relative_to(PACKAGE)} imports {name}")
    assert not wrong, "\n".join(wrong)


def test_front_ends_never_reach_the_store_directly():
    """Named on its own: the rule the application layer exists for."""
    for layer in FRONT_ENDS:
        assert "storage" not in ALLOWED[layer]
        for path in (PACKAGE / layer).rglob("*.py"):
            found = [n for n in _imports(path) if n.startswith(("kenning.storage", "apsw", "sqlite"))]
            assert not found, (path, found)


def test_every_package_is_in_the_table():
    """A new package must say what it may import (mcp front end, extractors...)."""
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert packages <= set(ALLOWED) | {"launcher"}, packages - set(ALLOWED)


def _runtime_imports(path: Path):
    """_imports without those only a type checker reads (`if TYPE_CHECKING:` blocks)."""

    class Runtime(ast.NodeVisitor):
        def __init__(self) -> None:
            self.found: list[str] = []

        def visit_If(self, node: ast.If) -> None:
            if isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
                for child in node.orelse:
                    self.visit(child)
            else:
                self.generic_visit(node)

        def visit_Import(self, node: ast.Import) -> None:
            self.found.extend(alias.name for alias in node.names)

        def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
            if node.module and node.level == 0:
                self.found.append(node.module)

    visitor = Runtime()
    visitor.visit(ast.parse(path.read_text(encoding="utf-8")))
    return visitor.found


def test_core_uses_the_standard_library_only():
    """At run time (a type checker may read typing_extensions: core.records' dataclass_transform,
    typing's from Python 3.11)."""
    import sys

    for path in (PACKAGE / "core").rglob("*.py"):
        for name in _runtime_imports(path):
            top = name.split(".")[0]
            assert top == "kenning" or top in sys.stdlib_module_names or top == "__future__", (path, name)


# `kenning eval` builds a throwaway store of its own (a BEIR collection) and measures
# engines with each ablation's options: a benchmark, not a front end's search.
OWN_STORE = {"cli/evaluate.py"}


def test_front_ends_search_through_the_workspace_only():
    """Issue #22: the CLI, the app and the MCP server hold no Store and build no engine;
    they search through workspace.Searcher (one plan → engine → options → search → notes)."""
    found = []
    for layer in FRONT_ENDS:
        for path in (PACKAGE / layer).rglob("*.py"):
            relative = str(path.relative_to(PACKAGE))
            if relative in OWN_STORE:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                is_argument = (
                    isinstance(node, ast.Attribute) and getattr(node.value, "id", "") == "args"
                )  # --store PATH
                if isinstance(node, ast.Attribute) and node.attr == "store" and not is_argument:
                    found.append(f"{relative}:{node.lineno} reads .store")
                if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) in (
                    "SearchEngine",
                    "open_store",
                ):
                    found.append(f"{relative}:{node.lineno} makes its own engine or store")
    assert not found, "\n".join(found)


# What the layers above storage may import from it: the interface, the factory functions
# of the package itself (opening a store, classifying its errors) and where files live.
STORAGE_INTERFACE = {"kenning.storage", "kenning.storage.api", "kenning.storage.paths"}
ABOVE_STORAGE = ("search", "ingest", "workspace")
BACKEND_MODULES = ("apsw", "sqlite3", "psycopg", "sqlite_vec")


@pytest.mark.parametrize("layer", ABOVE_STORAGE)
def test_layers_above_storage_use_only_the_storage_interface(layer):
    """Issue #22: search/, ingest/ and workspace/ import nothing of a backend (SQLite's
    modules, PostgreSQL's): they are handed a storage.api.Store and call its members."""
    wrong = []
    for path in (PACKAGE / layer).rglob("*.py"):
        for name in _imports_with_submodules(path):
            if name.startswith("kenning.storage.") and name not in STORAGE_INTERFACE:
                wrong.append(f"{path.relative_to(PACKAGE)} imports {name}")
            if name.split(".")[0] in BACKEND_MODULES:
                wrong.append(f"{path.relative_to(PACKAGE)} imports {name}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("layer", ABOVE_STORAGE)
def test_layers_above_storage_tell_no_backend_by_its_module(layer):
    """Nor do they tell a backend's errors or objects by the name of its module (a string
    like "psycopg" compared with type(exc).__module__): storage.failure_of says whose an
    error is."""
    wrong = []
    for path in (PACKAGE / layer).rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = docstring_ids(tree)
        for node in ast.walk(tree):
            is_text = isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
            if is_text and node.value.split(".")[0] in BACKEND_MODULES:
                wrong.append(f"{path.relative_to(PACKAGE)}:{node.lineno} names {node.value!r}")
    assert not wrong, "\n".join(wrong)


def _imports_with_submodules(path: Path):
    """Every module imported, `from kenning.storage import lexical` counted as kenning.storage.lexical."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module
            folder = PACKAGE.parent / node.module.replace(".", "/")
            for alias in node.names:
                if (folder / f"{alias.name}.py").exists() or (folder / alias.name / "__init__.py").exists():
                    yield f"{node.module}.{alias.name}"


def test_storage_words_no_advice_naming_a_command():
    """Issue #22: storage says what happened (an error kind, a typed result); the advice a
    user reads ("run `kenning rebuild`") is worded once, in workspace.messages."""
    offenders = []
    for path in sorted((PACKAGE / "storage").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = docstring_ids(tree)  # docstrings may name commands
        for node in ast.walk(tree):
            names_a_command = (
                isinstance(node, ast.Constant) and isinstance(node.value, str) and "`kenning " in node.value
            )
            if names_a_command and id(node) not in docs:
                offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {node.value.strip()[:70]}")
    assert not offenders, "storage names CLI commands in messages:\n" + "\n".join(offenders)
