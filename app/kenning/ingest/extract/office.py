"""Word (.docx) and OpenDocument (.odt) text, headings as markdown headings; the archive
and XML reading every Office format shares (sheets.py, slides.py, ebook.py use it too).

All are zip archives of XML.  Reading them with zipfile and defusedxml (rather than
python-docx / odfpy) keeps the dependency small and puts every limit in our hands:
declared and actual uncompressed sizes are checked before and while inflating (zip
bombs), and the XML parser refuses DTDs and entities (billion laughs, external files).
"""

from __future__ import annotations

import io
import zipfile
from xml.etree.ElementTree import Element

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import ParseError, fromstring

from kenning.ingest.extract.model import (
    MARKDOWN,
    MAX_COMPRESSION_RATIO,
    MAX_UNZIPPED_BYTES,
    Extracted,
    ExtractionSkipped,
    Section,
    TextBudget,
)

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_DC = "{http://purl.org/dc/elements/1.1/}"
_TEXT = ODF_TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
ODF_TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"
_OFFICE = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}"
# Parts a reader inflates (XML and relationships): each is checked before any is read.
_XML_PART = (".xml", ".rels")


def extract_docx(raw: bytes) -> list[Extracted]:
    with open_archive(raw) as archive:
        body = parse_member(archive, "word/document.xml")
        title = core_title(archive, "docProps/core.xml")
    lines = [_docx_paragraph(p) for p in body.iter(f"{_W}p")]
    return _document(lines, title)


def extract_odt(raw: bytes) -> list[Extracted]:
    with open_archive(raw) as archive:
        content = odf_content(archive, "text")
        title = odf_title(archive)
    body = content.find(f"{_OFFICE}body")
    lines = [_odt_block(node) for node in (body.iter() if body is not None else ()) if _is_odt_block(node)]
    return _document(lines, title)


def odf_content(archive: zipfile.ZipFile, kind: str) -> Element:
    """The content.xml of an OpenDocument file (kind: text, spreadsheet, presentation),
    refused as `encrypted` when its manifest says it is password-protected."""
    if "content.xml" not in archive.namelist():
        raise ExtractionSkipped("malformed", f"no content.xml (not an OpenDocument {kind}?)")
    if "encryption-data" in read_member(archive, "META-INF/manifest.xml", optional=True).decode("utf-8", "replace"):
        raise ExtractionSkipped("encrypted", "the document is password-protected")
    return parse_member(archive, "content.xml")


def odf_title(archive: zipfile.ZipFile) -> str:
    return core_title(archive, "meta.xml")


def _document(lines: list[str], title: str) -> list[Extracted]:
    budget = TextBudget()
    text = budget.take("\n\n".join(line for line in lines if line.strip()))
    if not title:
        title = next((line.lstrip("# ") for line in text.split("\n") if line.startswith("#")), "")
    meta = {"truncated": "text beyond the per-file limit was left out"} if budget.truncated else {}
    return [Extracted(title, (Section(text + "\n", MARKDOWN),) if text.strip() else (), meta)]


# ---------------------------------------------------------------- the archive


def open_archive(raw: bytes) -> zipfile.ZipFile:
    """The zip archive of an Office file or e-book, refused before anything is inflated
    when it declares too much in all, or an XML part too large or too compressed (a
    library reading the archive itself, openpyxl, only meets parts checked here; zipfile
    never inflates a part past its declared size)."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(raw))
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        if raw.startswith(b"\xd0\xcf\x11\xe0"):  # OLE container: Office's encrypted files
            raise ExtractionSkipped("encrypted", "the document is password-protected") from exc
        raise ExtractionSkipped("malformed", f"not a zip archive ({exc})") from exc
    try:
        infos = archive.infolist()
        declared = sum(info.file_size for info in infos)
        if declared > 4 * MAX_UNZIPPED_BYTES:
            raise ExtractionSkipped("zip-bomb", f"declares {declared} uncompressed bytes")
        for info in infos:
            if info.filename.lower().endswith(_XML_PART):
                _check_member(info)
    except BaseException:
        archive.close()
        raise
    return archive


def _check_member(info: zipfile.ZipInfo) -> None:
    name = info.filename
    if info.file_size > MAX_UNZIPPED_BYTES:
        raise ExtractionSkipped("zip-bomb", f"{name} declares {info.file_size} uncompressed bytes")
    if info.compress_size and info.file_size / info.compress_size > MAX_COMPRESSION_RATIO and info.file_size > 1 << 20:
        raise ExtractionSkipped("zip-bomb", f"{name} inflates {info.file_size // info.compress_size}x")


def read_member(archive: zipfile.ZipFile, name: str, optional: bool = False) -> bytes:
    try:
        info = archive.getinfo(name)
    except KeyError:
        if optional:
            return b""
        raise ExtractionSkipped("malformed", f"no {name} in the archive") from None
    _check_member(info)
    try:
        with archive.open(info) as member:
            # Never trust the declared size: stop inflating one byte past the limit.
            data = member.read(MAX_UNZIPPED_BYTES + 1)
    except (zipfile.BadZipFile, RuntimeError, OSError, EOFError, ValueError) as exc:
        # RuntimeError: zipfile's "encrypted, password required" (legacy zip encryption)
        reason = "encrypted" if "encrypted" in str(exc) else "malformed"
        raise ExtractionSkipped(reason, f"{name}: {exc}") from exc
    if len(data) > MAX_UNZIPPED_BYTES:
        raise ExtractionSkipped("zip-bomb", f"{name} inflates past {MAX_UNZIPPED_BYTES} bytes")
    return data


def parse_member(archive: zipfile.ZipFile, name: str) -> Element:
    data = read_member(archive, name)
    try:
        root: Element = fromstring(data, forbid_dtd=True)
        return root
    except DefusedXmlException as exc:
        raise ExtractionSkipped("malformed", f"{name}: refused XML ({type(exc).__name__})") from exc
    except (ParseError, RecursionError) as exc:
        raise ExtractionSkipped("malformed", f"{name}: {exc}") from exc


def core_title(archive: zipfile.ZipFile, name: str) -> str:
    data = read_member(archive, name, optional=True)
    if not data:
        return ""
    try:
        root = fromstring(data, forbid_dtd=True)
    except (DefusedXmlException, ParseError, RecursionError):
        return ""  # broken metadata never costs the text
    node = root.find(f".//{_DC}title")
    return " ".join((node.text or "").split()) if node is not None else ""


# ---------------------------------------------------------------- .docx


def _docx_paragraph(paragraph: Element) -> str:
    """The paragraph's own text: a paragraph nested in it (a text box's) is a line of its
    own, so it is not read twice, and 20,000 nested paragraphs cost linear time, not
    quadratic (each node is visited once over the whole document)."""
    parts = []
    below = list(reversed(paragraph))  # a stack, in document order; no recursion depth limit
    while below:
        node = below.pop()
        if node.tag == f"{_W}p":
            continue  # body.iter() yields it as its own paragraph
        if node.tag == f"{_W}t" and node.text:
            parts.append(node.text)
        elif node.tag == f"{_W}tab":
            parts.append("\t")
        elif node.tag in (f"{_W}br", f"{_W}cr"):
            parts.append("\n")
        below.extend(reversed(node))
    text = "".join(parts).strip()
    level = _docx_heading_level(paragraph)
    return f"{'#' * level} {' '.join(text.split())}" if level and text else text


def _docx_heading_level(paragraph: Element) -> int:
    style = paragraph.find(f"{_W}pPr/{_W}pStyle")
    outline = paragraph.find(f"{_W}pPr/{_W}outlineLvl")
    outline_level = (outline.get(f"{_W}val") or "") if outline is not None else ""
    if outline_level.isdigit():
        return min(int(outline_level) + 1, 6)
    name = (style.get(f"{_W}val") or "").lower() if style is not None else ""
    if name == "title":
        return 1
    # Built-in heading styles are "Heading1".."Heading9" (localised names keep the id).
    if name.startswith("heading") and name[7:].isdigit():
        return min(int(name[7:]), 6)
    return 0


# ---------------------------------------------------------------- .odt


def _is_odt_block(node: Element) -> bool:
    return node.tag in (f"{_TEXT}h", f"{_TEXT}p")


def _odt_block(node: Element) -> str:
    text = " ".join(odt_text(node).split(" ")).strip()
    if node.tag == f"{_TEXT}h":
        level = node.get(f"{_TEXT}outline-level") or "1"
        level_number = min(int(level), 6) if level.isdigit() else 1
        return f"{'#' * level_number} {' '.join(text.split())}" if text else ""
    return text


def odt_text(node: Element) -> str:
    """The text of a paragraph, spans included, nested paragraphs (notes) excluded."""
    parts = [node.text or ""]
    for child in node:
        if child.tag == f"{_TEXT}s":
            count = child.get(f"{_TEXT}c") or "1"
            parts.append(" " * min(int(count) if count.isdigit() else 1, 100))
        elif child.tag == f"{_TEXT}tab":
            parts.append("\t")
        elif child.tag == f"{_TEXT}line-break":
            parts.append("\n")
        elif not _is_odt_block(child):
            parts.append(odt_text(child))
        parts.append(child.tail or "")
    return "".join(parts)
