"""docs/architecture.md cannot drift silently from the code it describes (issue #22).

- §8's seam table lists exactly the storage interface's members: each member of
  kenning.storage.api.Store, the concern (protocol) it returns, and that concern's
  methods, read from api.py's source.
- §1's layer table says of each package what tests/test_layering.py lets it import.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from test_layering import ALLOWED

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
API = ROOT / "app" / "kenning" / "storage" / "api.py"
STORE_ROW = "(the store)"


def _protocols() -> dict[str, ast.ClassDef]:
    tree = ast.parse(API.read_text(encoding="utf-8"))
    return {
        node.name: node
        for node in tree.body
        if isinstance(node, ast.ClassDef) and any(getattr(b, "id", "") == "Protocol" for b in node.bases)
    }


def _methods(cls: ast.ClassDef) -> list[str]:
    return [n.name for n in cls.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")]


def interface_rows() -> dict[str, tuple[str, list[str]]]:
    """member -> (concern, its methods), and the store's own methods, as api.py declares them."""
    protocols = _protocols()
    store = protocols["Store"]
    rows: dict[str, tuple[str, list[str]]] = {}
    own = []
    for node in store.body:
        if not isinstance(node, ast.FunctionDef) or node.name.startswith("_"):
            continue
        returned = ast.unparse(node.returns) if node.returns else ""
        if returned in protocols and returned != "Store":
            rows[node.name] = (returned, _methods(protocols[returned]))
        else:
            own.append(node.name)
    rows[STORE_ROW] = ("Store", own)
    return rows


def _table(text: str, start: str, end: str) -> list[list[str]]:
    block = text[text.index(start) : text.index(end, text.index(start))]
    cells = []
    for line in block.splitlines():
        if line.startswith("|") and not line.startswith("|---"):
            cells.append([c.strip() for c in line.strip("|").split("|")])
    return cells[1:]  # the header row goes


def _names(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def test_the_seam_table_lists_the_interface_as_declared():
    text = DOC.read_text(encoding="utf-8")
    documented = {}
    for member, concern, methods in _table(text, "<!-- seam:", "<!-- /seam -->"):
        key = member if member == STORE_ROW else _names(member)[0]
        documented[key] = (_names(concern)[0], _names(methods))
    assert documented == interface_rows()


def test_the_layer_table_says_what_the_layering_test_allows():
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## 1. Layers") : text.index("## 2.")]
    documented = {}
    for package, _owns, may_import in _table(section, "| package |", "\n\n"):
        plain = re.sub(r"\([^)]*\)", "", may_import)  # what a parenthesis explains is not a package
        documented[_names(package)[0]] = {w.strip() for w in plain.split(",") if w.strip() not in ("", "stdlib only")}
    assert documented == {package: set(allowed) for package, allowed in ALLOWED.items()}


def test_the_checks_can_fail(tmp_path, monkeypatch):
    """A member missing from the table, or an import the table does not grant, is caught."""
    rows = interface_rows()
    assert "nearest" in rows["vectors"][1] and rows["vectors"][0] == "Vectors"
    assert "count_total" in rows["keywords"][1] and "atomic" in rows[STORE_ROW][1]
    text = DOC.read_text(encoding="utf-8").replace(", `warm` |", " |")
    monkeypatch.setattr(
        "test_docs.DOC", type("D", (), {"read_text": staticmethod(lambda encoding=None: text)})
    )  # the doc without one method
    try:
        test_the_seam_table_lists_the_interface_as_declared()
    except AssertionError:
        return
    raise AssertionError("a method missing from the table went unnoticed")
