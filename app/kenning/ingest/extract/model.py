"""What an extractor hands back: documents made of located sections, or a skip reason.

Everything here is plain data that survives a trip through JSON, because extraction
runs in a separate worker process (see worker.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

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


@dataclass(frozen=True)
class Section:
    text: str
    kind: str = TEXT  # "markdown" | "text" | "code:<lang>"
    location: str = ""  # "p. 12", "cell 3"; "" when the whole document is one place
    heading: str = ""  # heading path in force here (a PDF's outline), for chunks without one


@dataclass(frozen=True)
class Extracted:
    """One indexable document; a container (.mbox) yields one per message."""

    title: str
    sections: tuple[Section, ...]
    meta: dict[str, str] = field(default_factory=dict)  # sender, date, language, pages...
    date: float | None = None  # e-mail date: feeds recency
    part: str = ""  # message number inside a container, "" for a single document

    def to_json(self) -> dict:
        return {
            "title": self.title,
            "sections": [[s.text, s.kind, s.location, s.heading] for s in self.sections],
            "meta": self.meta,
            "date": self.date,
            "part": self.part,
        }

    @staticmethod
    def from_json(data: dict) -> Extracted:
        sections = tuple(Section(str(t), str(k), str(loc), str(h)) for t, k, loc, h in data["sections"])
        meta = {str(k): str(v) for k, v in data.get("meta", {}).items()}
        date = data.get("date")
        return Extracted(str(data["title"]), sections, meta, float(date) if date is not None else None, data["part"])


@dataclass(frozen=True)
class Extraction:
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
