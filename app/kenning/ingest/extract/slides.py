"""Slides: PowerPoint (.pptx) and OpenDocument presentations (.odp), one section a slide.

Each slide is located `slide N` (in the order the presentation shows them), titled by
its title placeholder, with its text boxes and tables in reading order and its speaker
notes after them.

.pptx is read like .docx (office.py: zipfile and defusedxml) rather than with
python-pptx: a slide's text is a few XML elements (`a:p` paragraphs of `a:t` runs), while
python-pptx would bring lxml, Pillow and XlsxWriter, parse with lxml (whose entity and
size defences are not the ones every other Office part goes through here), and read
parts past the limits office.open_archive checks.  .odp goes through the same
OpenDocument reader as .odt and .ods.
"""

from __future__ import annotations

import posixpath
import re
import zipfile
from xml.etree.ElementTree import Element

from kenning.ingest.extract.model import MARKDOWN, Extracted, Section, TextBudget
from kenning.ingest.extract.office import (
    ODF_TEXT,
    core_title,
    odf_content,
    odf_title,
    odt_text,
    open_archive,
    parse_member,
)

_P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_REL = "{http://schemas.openxmlformats.org/package/2006/relationships}"
_NOTES_TYPE = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/notesSlide"
_DRAW = "{urn:oasis:names:tc:opendocument:xmlns:drawing:1.0}"
_PRESENTATION = "{urn:oasis:names:tc:opendocument:xmlns:presentation:1.0}"
_TITLE_PLACEHOLDERS = {"title", "ctrTitle"}
_SLIDE_NAME = re.compile(r"ppt/slides/slide(\d+)\.xml")
MAX_SLIDES = 5000


def extract_pptx(raw: bytes) -> list[Extracted]:
    budget = TextBudget()
    sections = []
    with open_archive(raw) as archive:
        title = core_title(archive, "docProps/core.xml")
        for number, part in enumerate(_slide_parts(archive)[:MAX_SLIDES], 1):
            heading, body = _pptx_slide(parse_member(archive, part))
            notes = _pptx_notes(archive, part)
            section = _slide_section(number, heading, body, notes, budget)
            if section is not None:
                sections.append(section)
            if budget.exhausted:
                break
    return [_presentation(title, sections, budget)]


def extract_odp(raw: bytes) -> list[Extracted]:
    with open_archive(raw) as archive:
        content = odf_content(archive, "presentation")
        title = odf_title(archive)
    budget = TextBudget()
    sections = []
    for number, page in enumerate(list(content.iter(f"{_DRAW}page"))[:MAX_SLIDES], 1):
        notes = page.find(f"{_PRESENTATION}notes")
        heading, body = _odp_page(page, notes)
        notes_text = _odf_paragraphs(notes) if notes is not None else []
        section = _slide_section(number, heading, body, notes_text, budget)
        if section is not None:
            sections.append(section)
        if budget.exhausted:
            break
    return [_presentation(title, sections, budget)]


# ---------------------------------------------------------------- .pptx


def _slide_parts(archive: zipfile.ZipFile) -> list[str]:
    """The slides' part names in presentation order (presentation.xml's list), else by number."""
    names = set(archive.namelist())
    try:
        presentation = parse_member(archive, "ppt/presentation.xml")
        rels = _relationships(archive, "ppt/presentation.xml")
    except Exception:
        presentation, rels = None, {}
    ordered = []
    if presentation is not None:
        for slide in presentation.iter(f"{_P}sldId"):
            target = rels.get(slide.get(f"{_R}id") or "")
            if target in names and target not in ordered:
                ordered.append(target)
    if ordered:
        return ordered
    numbered = sorted((int(m.group(1)), n) for n in names if (m := _SLIDE_NAME.fullmatch(n)))
    return [name for _, name in numbered]


def _relationships(archive: zipfile.ZipFile, part: str) -> dict[str, str]:
    """rId -> the archive name of the part it points to (only parts inside the archive)."""
    folder, name = posixpath.split(part)
    rels_name = posixpath.join(folder, "_rels", name + ".rels")
    if rels_name not in archive.namelist():
        return {}
    out = {}
    for rel in parse_member(archive, rels_name).iter(f"{_REL}Relationship"):
        target = rel.get("Target") or ""
        if rel.get("TargetMode") == "External" or not target:
            continue
        resolved = posixpath.normpath(target.lstrip("/") if target.startswith("/") else posixpath.join(folder, target))
        out[rel.get("Id") or ""] = resolved
        if rel.get("Type") == _NOTES_TYPE:
            out["notes"] = resolved
    return out


def _pptx_slide(slide: Element) -> tuple[str, list[str]]:
    heading, body = "", []
    for shape in slide.iter():
        if shape.tag not in (f"{_P}sp", f"{_P}graphicFrame"):
            continue
        placeholder = shape.find(f"{_P}nvSpPr/{_P}nvPr/{_P}ph")
        paragraphs = _drawing_paragraphs(shape)
        if placeholder is not None and placeholder.get("type") in _TITLE_PLACEHOLDERS and not heading:
            heading = " ".join(" ".join(paragraphs).split())
        else:
            body.extend(paragraphs)
    return heading, body


def _pptx_notes(archive: zipfile.ZipFile, slide_part: str) -> list[str]:
    notes_part = _relationships(archive, slide_part).get("notes")
    if not notes_part or notes_part not in archive.namelist():
        return []
    notes = parse_member(archive, notes_part)
    paragraphs = []
    for shape in notes.iter(f"{_P}sp"):
        placeholder = shape.find(f"{_P}nvSpPr/{_P}nvPr/{_P}ph")
        if placeholder is not None and placeholder.get("type") == "body":  # not the slide image or number
            paragraphs.extend(_drawing_paragraphs(shape))
    return paragraphs


def _drawing_paragraphs(shape: Element) -> list[str]:
    out = []
    for paragraph in shape.iter(f"{_A}p"):
        parts = []
        for node in paragraph.iter():
            if node.tag == f"{_A}t" and node.text:
                parts.append(node.text)
            elif node.tag == f"{_A}br":
                parts.append(" ")
        text = " ".join("".join(parts).split())
        if text:
            out.append(text)
    return out


# ---------------------------------------------------------------- .odp


def _odp_page(page: Element, notes: Element | None) -> tuple[str, list[str]]:
    heading, body = "", []
    for frame in page:
        if frame is notes:
            continue
        paragraphs = _odf_paragraphs(frame)
        if frame.get(f"{_PRESENTATION}class") == "title" and not heading:
            heading = " ".join(" ".join(paragraphs).split())
        else:
            body.extend(paragraphs)
    return heading, body


def _odf_paragraphs(node: Element) -> list[str]:
    texts = (odt_text(p) for p in node.iter() if p.tag in (f"{ODF_TEXT}p", f"{ODF_TEXT}h"))
    return [" ".join(t.split()) for t in texts if t.strip()]


# ---------------------------------------------------------------- both


def _slide_section(number: int, heading: str, body: list[str], notes: list[str], budget: TextBudget) -> Section | None:
    lines = [f"# {heading}"] if heading else []
    lines += body
    if notes:
        lines += ["", "Notes:", *notes]
    text = "\n\n".join(line for line in lines if line != "") if lines else ""
    if not text.strip() or budget.exhausted:
        return None
    return Section(budget.take(text) + "\n", MARKDOWN, f"slide {number}", heading or f"Slide {number}")


def _presentation(title: str, sections: list[Section], budget: TextBudget) -> Extracted:
    if not title:
        title = next((s.heading for s in sections if not s.heading.startswith("Slide ")), "")
    meta = {"slides": str(len(sections))}
    if budget.truncated:
        meta["truncated"] = "text beyond the per-file limit was left out"
    return Extracted(title, tuple(sections), meta)
