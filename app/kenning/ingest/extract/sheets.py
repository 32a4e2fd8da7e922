"""Spreadsheets: Excel (.xlsx, read by openpyxl in read-only mode) and OpenDocument (.ods).

Each sheet is one located section (`sheet Budget`), one line per row, its cells joined
by " | ", so a word is found in its row and the row's neighbours give it context. What a
cell shows is what is indexed: formulas are read as their last computed values.

Hostile sheets are bounded before anything is inflated (the archive's declared sizes and
ratios, office.open_archive) and while reading: at most MAX_ROWS rows (empty ones
included: a sheet whose rows jump to 1,048,576 costs only the rows read) and
MAX_COLUMNS columns a sheet, and MAX_TEXT_CHARS of text a file. OpenDocument repeats
(`number-rows-repeated="1048576"`, how Calc writes an empty tail) are never expanded:
a repeated row or cell is read once.
"""

from __future__ import annotations

import datetime as dt
import io
from collections.abc import Iterable, Iterator, Sequence
from typing import TypeVar
from xml.etree.ElementTree import Element

from kenning.ingest.extract.model import TEXT, Extracted, ExtractionSkipped, Section, TextBudget
from kenning.ingest.extract.office import ODF_TABLE, ODF_TEXT, odf_content, odf_title, odt_text, open_archive

MAX_ROWS = 200_000  # rows read per sheet, empty ones included
MAX_COLUMNS = 500  # cells read per row
MAX_SHEETS = 500
CELL_SEPARATOR = " | "


def extract_xlsx(raw: bytes) -> list[Extracted]:
    import openpyxl  # its XML reading goes through defusedxml when installed (it is a dependency)

    open_archive(raw).close()  # sizes and ratios checked before openpyxl inflates anything
    try:
        book = openpyxl.load_workbook(io.BytesIO(raw), read_only=True, data_only=True)
    except KeyError as exc:  # a part the workbook names is missing
        raise ExtractionSkipped("malformed", f"not a complete workbook ({exc})") from exc
    budget = TextBudget()
    sections: list[Section] = []
    try:
        title = (book.properties.title or "").strip() if book.properties else ""
        for sheet in book.worksheets[:MAX_SHEETS]:
            rows = sheet.iter_rows(max_col=MAX_COLUMNS, values_only=True)
            text = budget.take(_lines(_row_text(row) for row in _at_most(rows, MAX_ROWS)))
            if text.strip():
                sections.append(_sheet_section(sheet.title, text))
            if budget.exhausted:
                break
    finally:
        book.close()
    return [_workbook(title, sections, budget)]


def extract_ods(raw: bytes) -> list[Extracted]:
    archive = open_archive(raw)
    with archive:
        content = odf_content(archive, "spreadsheet")
        title = odf_title(archive)
    budget = TextBudget()
    sections: list[Section] = []
    for table in list(content.iter(f"{ODF_TABLE}table"))[:MAX_SHEETS]:
        rows = (_ods_row(row) for row in table.iter(f"{ODF_TABLE}table-row"))
        text = budget.take(_lines(_at_most(rows, MAX_ROWS)))
        if text.strip():
            sections.append(_sheet_section(table.get(f"{ODF_TABLE}name") or f"{len(sections) + 1}", text))
        if budget.exhausted:
            break
    return [_workbook(title, sections, budget)]


_Row = TypeVar("_Row")


def _at_most(rows: Iterable[_Row], limit: int) -> Iterator[_Row]:
    for number, row in enumerate(rows):
        if number >= limit:
            return
        yield row


def _lines(rows: Iterable[str]) -> str:
    return "\n".join(row for row in rows if row)


def _row_text(values: Sequence[object]) -> str:
    if isinstance(values, tuple) and values.count(None) == len(values):
        return ""  # an empty row (openpyxl fills a gap in the row numbers with them): no Python per cell
    cells = [_cell_text(value) for value in values]
    while cells and not cells[-1]:
        cells.pop()
    return CELL_SEPARATOR.join(cells) if any(cells) else ""


def _cell_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dt.datetime) and value.time() == dt.time():
        return value.date().isoformat()
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    return " ".join(str(value).split())


def _ods_row(row: Element) -> str:
    cells: list[str] = []
    for cell in row:
        if cell.tag not in (f"{ODF_TABLE}table-cell", f"{ODF_TABLE}covered-table-cell"):
            continue
        if len(cells) >= MAX_COLUMNS:
            break
        paragraphs = [odt_text(p) for p in cell.iter(f"{ODF_TEXT}p")]
        cells.append(" ".join(" ".join(p.split()) for p in paragraphs if p.strip()))
    return _row_text(cells)


def _sheet_section(name: str, text: str) -> Section:
    name = " ".join(name.split()) or "sheet"
    return Section(text + "\n", TEXT, f"sheet {name}", name)


def _workbook(title: str, sections: list[Section], budget: TextBudget) -> Extracted:
    meta = {"truncated": "text beyond the per-file limit was left out"} if budget.truncated else {}
    meta["sheets"] = str(len(sections))
    return Extracted(title, tuple(sections), meta)
