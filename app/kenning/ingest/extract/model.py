"""What an extractor hands back: documents made of located sections, or a skip reason.

Everything here is plain data that survives a trip through JSON, because extraction
runs in a separate worker process (see worker.py).
"""

from __future__ import annotations

import os
import re
from dataclasses import field
from typing import Any

from kenning.core.records import Record

# Kind of text a section holds; the chunker cuts it like a file of that kind.
MARKDOWN = "markdown"
TEXT = "text"

# Limits one file's extraction must stay within (the worker enforces time and memory).
MAX_FILE_BYTES = 128 * 1024 * 1024  # documents (PDFs with figures) are larger than notes
MAX_TEXT_CHARS = 8 * 1024 * 1024  # extracted text kept per file; the rest is dropped
MAX_UNZIPPED_BYTES = 64 * 1024 * 1024  # declared size of the XML parts of a .docx/.odt
MAX_COMPRESSION_RATIO = 200  # XML compresses ~10x; a bomb compresses ~1000x
SHORT_OUTPUT_CHARS = 2000  # notebook text outputs longer than this are left out
TIME_LIMIT_S = 30.0
MEMORY_LIMIT_BYTES = 1024 * 1024 * 1024


class ExtractionSkipped(Exception):
    """Raised by an extractor for a file it recognises but cannot index."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


class Section(Record, frozen=True):
    text: str
    kind: str = TEXT  # "markdown" | "text" | "code:<lang>"
    location: str = ""  # "p. 12", "cell 3"; "" when the whole document is one place
    heading: str = ""  # heading path in force here (a PDF's outline), for chunks without one


class Extracted(Record, frozen=True):
    """One indexable document; a container (.mbox) yields one per message."""

    title: str
    sections: tuple[Section, ...]
    meta: dict[str, str] = field(default_factory=dict)  # sender, date, language, pages...
    date: float | None = None  # e-mail date: feeds recency
    part: str = ""  # message number inside a container, "" for a single document

    def to_json(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "sections": [[s.text, s.kind, s.location, s.heading] for s in self.sections],
            "meta": self.meta,
            "date": self.date,
            "part": self.part,
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> Extracted:
        sections = tuple(Section(str(t), str(k), str(loc), str(h)) for t, k, loc, h in data["sections"])
        meta = {str(k): str(v) for k, v in data.get("meta", {}).items()}
        date = data.get("date")
        return Extracted(str(data["title"]), sections, meta, float(date) if date is not None else None, data["part"])


class Extraction(Record, frozen=True):
    documents: tuple[Extracted, ...] = ()
    skip_reason: str | None = None
    detail: str = ""


class TextBudget:
    """Counts extracted characters so a huge document stops at MAX_TEXT_CHARS."""

    def __init__(self, limit: int = MAX_TEXT_CHARS) -> None:
        self.left = limit
        self.truncated = False

    def take(self, text: str) -> str:
        if len(text) <= self.left:
            self.left -= len(text)
            return text
        self.truncated = True
        text, self.left = text[: self.left], 0
        return text

    @property
    def exhausted(self) -> bool:
        return self.left <= 0


# -- titles ---------------------------------------------------------------------------
# What document generators write into the title field when the author wrote none: the
# tool's own name, a placeholder, or the file's name.  Such a title says nothing (a user
# saw "Enscript Output" for a runbook); the document's first line says more.
_GENERATOR_TITLE = re.compile(
    r"enscript output|microsoft (?:word|powerpoint|excel) -.*|untitled(?:[ _-]*(?:document|\d+))?"
    r"|\(?(?:no title|untitled)\)?|new document|document ?\d*|title|slide ?\d*|powerpoint presentation|print",
    re.IGNORECASE,
)
_FILE_NAME = re.compile(
    r"[^/\\]*\.(?:pdf|docx?|odt|rtf|txt|md|tex|dvi|e?ps|html?|xhtml|ipynb|pptx?|xlsx?|odp|ods|pages|wpd)",
    re.IGNORECASE,
)
MAX_TITLE_LINE_CHARS = 160
_LETTERS = re.compile(r"[^\W\d_]{2}")


def _plain_name(text: str) -> str:
    return " ".join(re.split(r"[\s_\-.]+", text.casefold())).strip()


def is_generator_title(title: str, file_name: str = "") -> bool:
    """True for an empty title, a generator's default, or the document's own file name."""
    text = " ".join(title.split()).strip(" -_.:")
    if not text or _GENERATOR_TITLE.fullmatch(text) or _FILE_NAME.fullmatch(text):
        return True
    if file_name:
        name = os.path.basename(file_name)
        return _plain_name(text) in {_plain_name(name), _plain_name(os.path.splitext(name)[0])}
    return False


def first_line_title(text: str) -> str:
    """A title-like first line: short, with letters (not a page number or a rule)."""
    for line in text.split("\n")[:20]:
        line = " ".join(line.lstrip("#").split())
        if line and len(line) <= MAX_TITLE_LINE_CHARS and _LETTERS.search(line):
            return line
    return ""


def titled(document: Extracted, file_name: str) -> Extracted:
    """The document with its title, or its first line when the title says nothing."""
    if not is_generator_title(document.title, file_name) or not document.sections:
        return document
    from dataclasses import replace

    return replace(document, title=first_line_title(document.sections[0].text))
