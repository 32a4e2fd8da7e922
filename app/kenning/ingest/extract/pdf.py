"""PDF: the text layer of each page (PDFium, through pypdfium2).

PDFium is the engine Chrome uses on every PDF of the web: fast, and hardened against
broken files.  A page's text becomes one section located "p. N"; a document with no
text at all (a scan) is skipped as "no text layer" rather than indexed empty.
"""

from __future__ import annotations

import pypdfium2 as pdfium

from kenning.ingest.extract.model import MAX_TITLE_LINE_CHARS, Extracted, ExtractionSkipped, Section, TextBudget

_MAX_TITLE_CHARS = MAX_TITLE_LINE_CHARS
MAX_OUTLINE_DEPTH = 6
MAX_OUTLINE_ITEMS = 5000  # outlines can be cyclic or huge in hostile files


def extract_pdf(raw: bytes) -> list[Extracted]:
    try:
        pdf = pdfium.PdfDocument(raw)
    except pdfium.PdfiumError as exc:
        raise _classify_open_error(exc) from exc
    try:
        sections, truncated = _pages(pdf)
        meta = {"pages": str(len(pdf))}
        if truncated:
            meta["truncated"] = "text beyond the per-file limit was left out"
        title = _metadata_title(pdf)
    finally:
        pdf.close()
    if not sections:
        raise ExtractionSkipped("no text layer", f"{meta['pages']} pages without extractable text (a scan?)")
    return [Extracted(title, tuple(sections), meta)]


def _classify_open_error(exc: Exception) -> ExtractionSkipped:
    message = str(exc)
    if "password" in message.lower():
        return ExtractionSkipped("encrypted", "the PDF needs a password")
    if "security" in message.lower():
        return ExtractionSkipped("encrypted", "unsupported security handler")
    return ExtractionSkipped("malformed", f"PDFium cannot open it ({message})")


def _pages(pdf: pdfium.PdfDocument) -> tuple[list[Section], bool]:
    budget = TextBudget()
    sections: list[Section] = []
    headings = _page_headings(pdf, len(pdf))
    for index in range(len(pdf)):
        if budget.exhausted:
            break
        page = pdf[index]
        try:
            textpage = page.get_textpage()
            try:
                text = textpage.get_text_range()
            finally:
                textpage.close()
        finally:
            page.close()
        text = _clean(text)
        if text.strip():
            sections.append(Section(budget.take(text), "text", f"p. {index + 1}", headings.get(index, "")))
    return sections, budget.truncated


def _page_headings(pdf: pdfium.PdfDocument, page_count: int) -> dict[int, str]:
    """Page index -> heading path of the outline (bookmark) entry in force on that page."""
    events: list[tuple[int, str]] = []
    path: list[str] = []
    try:
        for number, item in enumerate(pdf.get_toc(max_depth=MAX_OUTLINE_DEPTH)):
            if number >= MAX_OUTLINE_ITEMS:
                break
            title = " ".join((item.get_title() or "").split())[:_MAX_TITLE_CHARS]
            path = [*path[: item.level], title]
            dest = item.get_dest()
            index = dest.get_index() if dest is not None else None
            if title and index is not None and 0 <= index < page_count:
                events.append((index, " > ".join(p for p in path if p)))
    except Exception:  # a broken outline costs the headings, never the text
        return {}
    # A page is headed by the first entry starting on it (a chapter and its first sections
    # often share a page); pages without one continue the last entry before them.
    headings: dict[int, str] = {}
    starting: dict[int, list[str]] = {}
    for index, heading in events:
        starting.setdefault(index, []).append(heading)
    current = ""
    for page in range(page_count):
        if page in starting:
            headings[page] = starting[page][0]
            current = starting[page][-1]
        elif current:
            headings[page] = current
    return headings


def _clean(text: str) -> str:
    # PDFium ends lines with CRLF and marks soft hyphens and form feeds; keep plain lines.
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x02", "").replace("\ufffe", "")
    return text.replace("\x0c", "\n").replace("\x00", "")


def _metadata_title(pdf: pdfium.PdfDocument) -> str:
    """The info dictionary's title; a generator's default is replaced later (model.titled)."""
    try:
        title = pdf.get_metadata_value("Title")
    except Exception:  # broken info dictionaries are common; the first line will do
        return ""
    return " ".join(title.split())[:_MAX_TITLE_CHARS]
