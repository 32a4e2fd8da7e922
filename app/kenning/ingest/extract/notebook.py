"""Jupyter notebooks: markdown cells as markdown, code cells as code, each located "cell N".

Plain `json` reads the nbformat 4 layout (nbformat itself would add jsonschema and
several other packages for no gain here).  Outputs are mostly plots and tables that
make poor search text: only short plain-text outputs are kept, after their cell.
"""

from __future__ import annotations

import json

from kenning.ingest.extract.model import (
    MARKDOWN,
    SHORT_OUTPUT_CHARS,
    Extracted,
    ExtractionSkipped,
    Section,
    TextBudget,
)


def extract_notebook(raw: bytes) -> list[Extracted]:
    try:
        nb = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise ExtractionSkipped("malformed", f"not a JSON notebook ({type(exc).__name__})") from exc
    if not isinstance(nb, dict) or not isinstance(nb.get("cells", []), list):
        raise ExtractionSkipped("malformed", "no list of cells (nbformat 4 expected)")
    language = _language(nb.get("metadata"))
    budget = TextBudget()
    sections = []
    for number, cell in enumerate(nb.get("cells", []), 1):
        section = _cell_section(cell, number, language)
        if section is not None and not budget.exhausted:
            sections.append(Section(budget.take(section.text), section.kind, section.location))
    meta = {"language": language}
    if budget.truncated:
        meta["truncated"] = "text beyond the per-file limit was left out"
    title = _title(sections)
    return [Extracted(title, tuple(sections), meta)]


def _language(metadata: object) -> str:
    if not isinstance(metadata, dict):
        return "python"
    for key, field in (("kernelspec", "language"), ("language_info", "name")):
        value = metadata.get(key)
        if isinstance(value, dict) and isinstance(value.get(field), str) and value[field].strip():
            return str(value[field]).strip().lower()
    return "python"


def _source(value: object) -> str:
    if isinstance(value, list):
        return "".join(part for part in value if isinstance(part, str))
    return value if isinstance(value, str) else ""


def _cell_section(cell: object, number: int, language: str) -> Section | None:
    if not isinstance(cell, dict):
        return None
    text = _source(cell.get("source"))
    location = f"cell {number}"
    kind = cell.get("cell_type")
    if kind == "markdown":
        return Section(text, MARKDOWN, location) if text.strip() else None
    if kind == "code":
        outputs = _short_outputs(cell.get("outputs"))
        if outputs:
            text = f"{text.rstrip()}\n\n{outputs}"
        return Section(text, f"code:{language}", location) if text.strip() else None
    if kind == "raw":
        return Section(text, "text", location) if text.strip() else None
    return None


def _short_outputs(outputs: object) -> str:
    if not isinstance(outputs, list):
        return ""
    kept = []
    for output in outputs:
        if not isinstance(output, dict):
            continue
        if output.get("output_type") == "stream":
            text = _source(output.get("text"))
        elif output.get("output_type") in ("execute_result", "display_data"):
            data = output.get("data")
            text = _source(data.get("text/plain")) if isinstance(data, dict) else ""
        else:
            continue  # errors are tracebacks full of escape codes
        if text.strip() and len(text) <= SHORT_OUTPUT_CHARS:
            kept.append(text.rstrip())
    return "\n".join(kept)


def _title(sections: list[Section]) -> str:
    for section in sections:
        if section.kind != MARKDOWN:
            continue
        for line in section.text.split("\n"):
            if line.startswith("#"):
                return line.lstrip("#").strip()
    return ""
