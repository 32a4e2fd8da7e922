"""File formats whose text Kenning extracts (kenning.ingest.extract), by file suffix.

Defined here, in core, because both the indexer (which extractor reads a file) and the
front ends (how Enter opens it) need the same answer.
"""

from __future__ import annotations

from pathlib import PurePosixPath

# Suffix -> document kind.  Each kind has one extractor in kenning.ingest.extract.
EXTRACTED_SUFFIXES: dict[str, str] = {
    ".pdf": "pdf",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".ipynb": "notebook",
    ".docx": "docx",
    ".odt": "odt",
    ".xlsx": "xlsx",
    ".xlsm": "xlsx",  # the same workbook with macros (never run: only cell values are read)
    ".ods": "ods",
    ".pptx": "pptx",
    ".odp": "odp",
    ".epub": "epub",
    ".rtf": "rtf",
    ".eml": "eml",
    ".mbox": "mbox",
}
# Not text at all: only their own application shows them (an editor would show bytes).
BINARY_DOCUMENT_SUFFIXES = frozenset(
    {".pdf", ".docx", ".odt", ".xlsx", ".xlsm", ".ods", ".pptx", ".odp", ".epub", ".rtf"}
)


def extracted_kind(path: str) -> str | None:
    return EXTRACTED_SUFFIXES.get(PurePosixPath(path.replace("\\", "/")).suffix.lower())


def is_binary_document(path: str) -> bool:
    return PurePosixPath(path.replace("\\", "/")).suffix.lower() in BINARY_DOCUMENT_SUFFIXES
