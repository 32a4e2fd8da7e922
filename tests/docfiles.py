"""Real files of every extracted format, written by the tests themselves.

PDFs are written by hand (a few objects and a cross-reference table: the format is
plain text at heart); Office files are zip archives of XML; notebooks are JSON.
"""

from __future__ import annotations

import json
import zipfile
from datetime import datetime, timezone
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path


def _pdf_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def pdf_bytes(
    pages: list[list[str]],
    title: str = "",
    encrypt: bool = False,
    image_only: bool = False,
    outline: list[tuple[int, str, int]] = (),
    repeat_first: int = 0,
) -> bytes:
    """A PDF with one page per list of lines (Helvetica, WinAnsi text).

    outline: bookmarks as (level from 0, title, page index), in document order.
    repeat_first: a page tree listing the first page object that many times instead
    (a reader shows it that many times; a hostile file's way to make 100,000 pages).
    """
    objects: list[bytes] = []  # object n is objects[n - 1]
    page_count = len(pages)
    font_id = 3
    first_page_id = 4
    kids = " ".join(f"{first_page_id + 2 * i} 0 R" for i in range(page_count))
    if repeat_first:
        kids, page_count = " ".join([f"{first_page_id} 0 R"] * repeat_first), repeat_first
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {page_count} >>".encode())
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    for i, lines in enumerate(pages):
        page_id = first_page_id + 2 * i
        if image_only:
            stream = b"q 100 0 0 100 50 600 cm 0.5 g 0 0 1 1 re f Q"
        else:
            ops = ["BT", "/F1 12 Tf", "14 TL", "72 720 Td"]
            for line in lines:
                ops.append(f"({_pdf_escape(line)}) Tj T*")
            ops.append("ET")
            stream = "\n".join(ops).encode("cp1252")
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 {font_id} 0 R >> >>"
            f" /Contents {page_id + 1} 0 R >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    info_id = None
    if title:
        objects.append(f"<< /Title ({_pdf_escape(title)}) >>".encode())
        info_id = len(objects)
    outlines_id = _add_outline(objects, outline, first_page_id) if outline else None
    if outlines_id:
        objects[0] = f"<< /Type /Catalog /Pages 2 0 R /Outlines {outlines_id} 0 R >>".encode()
    encrypt_id = None
    if encrypt:
        # A standard security handler whose user password is not empty: readers must ask.
        objects.append(b"<< /Filter /Standard /V 1 /R 2 /O <" + b"ab" * 32 + b"> /U <" + b"cd" * 32 + b"> /P -4 >>")
        encrypt_id = len(objects)
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for n, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % n + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    trailer = f"<< /Size {len(objects) + 1} /Root 1 0 R"
    if info_id:
        trailer += f" /Info {info_id} 0 R"
    if encrypt_id:
        trailer += f" /Encrypt {encrypt_id} 0 R /ID [<{'00' * 16}> <{'00' * 16}>]"
    out += f"trailer\n{trailer} >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def _add_outline(objects: list[bytes], outline, first_page_id: int) -> int:
    """Append the outline tree's objects; return the id of the /Outlines dictionary."""
    root_id = len(objects) + 1
    ids = [root_id + 1 + i for i in range(len(outline))]
    parents: list[int] = []
    children: dict[int, list[int]] = {root_id: []}
    stack: list[tuple[int, int]] = [(-1, root_id)]  # (level, id)
    for (level, _, _), item_id in zip(outline, ids):
        while stack[-1][0] >= level:
            stack.pop()
        parent = stack[-1][1]
        parents.append(parent)
        children.setdefault(parent, []).append(item_id)
        children[item_id] = []
        stack.append((level, item_id))

    def links(item_id: int) -> str:
        kids = children[item_id]
        return f" /First {kids[0]} 0 R /Last {kids[-1]} 0 R /Count {len(kids)}" if kids else ""

    objects.append(f"<< /Type /Outlines{links(root_id)} >>".encode())
    for (_, text, page), item_id, parent in zip(outline, ids, parents):
        siblings = children[parent]
        at = siblings.index(item_id)
        prev = f" /Prev {siblings[at - 1]} 0 R" if at else ""
        nxt = f" /Next {siblings[at + 1]} 0 R" if at + 1 < len(siblings) else ""
        dest = f"[{first_page_id + 2 * page} 0 R /Fit]"
        objects.append(
            f"<< /Title ({_pdf_escape(text)}) /Parent {parent} 0 R{prev}{nxt}{links(item_id)} /Dest {dest} >>".encode()
        )
    return root_id


def write_pdf(path: Path, pages: list[list[str]], **kwargs) -> Path:
    path.write_bytes(pdf_bytes(pages, **kwargs))
    return path


_W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


def docx_bytes(paragraphs: list[tuple[str, str]], title: str = "") -> bytes:
    """paragraphs: (style, text) with style "" or "Heading1".."Heading9" or "Title"."""
    body = []
    for style, text in paragraphs:
        props = f'<w:pPr><w:pStyle w:val="{style}"/></w:pPr>' if style else ""
        body.append(f'<w:p>{props}<w:r><w:t xml:space="preserve">{_xml(text)}</w:t></w:r></w:p>')
    document = (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="{_W_NS}">'
        f"<w:body>{''.join(body)}</w:body></w:document>"
    )
    core = (
        '<?xml version="1.0" encoding="UTF-8"?><cp:coreProperties'
        ' xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties"'
        f' xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>{_xml(title)}</dc:title></cp:coreProperties>'
    )
    return _zip({"[Content_Types].xml": "<Types/>", "word/document.xml": document, "docProps/core.xml": core})


def odt_bytes(blocks: list[tuple[int, str]], title: str = "") -> bytes:
    """blocks: (heading level or 0 for a paragraph, text)."""
    body = []
    for level, text in blocks:
        if level:
            body.append(f'<text:h text:outline-level="{level}">{_xml(text)}</text:h>')
        else:
            body.append(f"<text:p>{_xml(text)}</text:p>")
    ns = (
        'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"'
        ' xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"'
    )
    content = f"<office:document-content {ns}><office:body><office:text>{''.join(body)}</office:text></office:body></office:document-content>"
    meta = (
        '<office:document-meta xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"'
        f' xmlns:dc="http://purl.org/dc/elements/1.1/"><office:meta><dc:title>{_xml(title)}</dc:title>'
        "</office:meta></office:document-meta>"
    )
    return _zip({"mimetype": "application/vnd.oasis.opendocument.text", "content.xml": content, "meta.xml": meta})


def _zip(members: dict[str, str]) -> bytes:
    import io

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in members.items():
            archive.writestr(name, text)
    return buffer.getvalue()


def _xml(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def notebook_json(cells: list[tuple[str, str]], language: str = "python", outputs: dict | None = None) -> str:
    """cells: (cell_type, source); outputs: cell index -> list of nbformat outputs."""
    out = []
    for i, (cell_type, source) in enumerate(cells):
        cell = {"cell_type": cell_type, "metadata": {}, "source": source.splitlines(keepends=True)}
        if cell_type == "code":
            cell["outputs"] = (outputs or {}).get(i, [])
            cell["execution_count"] = None
        out.append(cell)
    metadata = {"kernelspec": {"name": language, "language": language, "display_name": language}}
    return json.dumps({"cells": out, "metadata": metadata, "nbformat": 4, "nbformat_minor": 5})


def email_bytes(subject: str, sender: str, body: str, when: datetime | None = None, html: str = "") -> bytes:
    message = EmailMessage()
    message["Subject"] = subject
    message["From"] = sender
    message["To"] = "team@example.org"
    message["Date"] = format_datetime(when or datetime(2024, 3, 1, 12, 0, tzinfo=timezone.utc))
    if body:
        message.set_content(body)
        if html:
            message.add_alternative(html, subtype="html")
    else:
        message.set_content(html, subtype="html")
    return bytes(message)


def mbox_bytes(messages: list[bytes]) -> bytes:
    out = bytearray()
    for raw in messages:
        body = raw.replace(b"\r\n", b"\n")
        body = b"\n".join(b">" + line if line.startswith(b"From ") else line for line in body.split(b"\n"))
        out += b"From sender@example.org Fri Mar  1 12:00:00 2024\n" + body.rstrip(b"\n") + b"\n\n"
    return bytes(out)


def xlsx_bytes(sheets: dict[str, list[list]], title: str = "") -> bytes:
    """A real workbook (openpyxl writes it): sheet name -> rows of cell values."""
    import io

    import openpyxl

    book = openpyxl.Workbook()
    book.remove(book.active)
    for name, rows in sheets.items():
        sheet = book.create_sheet(name)
        for row in rows:
            sheet.append(row)
    book.properties.title = title or None
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


_ODF_NS = (
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"'
    ' xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"'
    ' xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"'
    ' xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"'
    ' xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0"'
)


def ods_bytes(sheets: dict[str, list[list[str]]], tail_repeat: int = 0) -> bytes:
    """sheet name -> rows of cell texts; tail_repeat: an empty row repeated that often at the end (as Calc writes)."""
    tables = []
    for name, rows in sheets.items():
        xml_rows = [
            "<table:table-row>"
            + "".join(f"<table:table-cell><text:p>{_xml(str(c))}</text:p></table:table-cell>" for c in row)
            + "</table:table-row>"
            for row in rows
        ]
        if tail_repeat:
            xml_rows.append(
                f'<table:table-row table:number-rows-repeated="{tail_repeat}">'
                '<table:table-cell table:number-columns-repeated="16384"/></table:table-row>'
            )
        tables.append(f'<table:table table:name="{_xml(name)}">{"".join(xml_rows)}</table:table>')
    content = (
        f"<office:document-content {_ODF_NS}><office:body><office:spreadsheet>{''.join(tables)}"
        "</office:spreadsheet></office:body></office:document-content>"
    )
    return _zip({"mimetype": "application/vnd.oasis.opendocument.spreadsheet", "content.xml": content})


def odp_bytes(slides: list[tuple[str, list[str], list[str]]]) -> bytes:
    """slides: (title, body paragraphs, speaker notes)."""
    pages = []
    for number, (title, body, notes) in enumerate(slides, 1):
        paragraphs = "".join(f"<text:p>{_xml(p)}</text:p>" for p in body)
        notes_xml = "".join(f"<text:p>{_xml(p)}</text:p>" for p in notes)
        pages.append(
            f'<draw:page draw:name="page{number}">'
            f'<draw:frame presentation:class="title"><draw:text-box><text:p>{_xml(title)}</text:p></draw:text-box></draw:frame>'
            f"<draw:frame><draw:text-box>{paragraphs}</draw:text-box></draw:frame>"
            f"<presentation:notes><draw:frame><draw:text-box>{notes_xml}</draw:text-box></draw:frame></presentation:notes>"
            "</draw:page>"
        )
    content = (
        f"<office:document-content {_ODF_NS}><office:body><office:presentation>{''.join(pages)}"
        "</office:presentation></office:body></office:document-content>"
    )
    return _zip({"mimetype": "application/vnd.oasis.opendocument.presentation", "content.xml": content})


_PML = "http://schemas.openxmlformats.org/presentationml/2006/main"
_DML = "http://schemas.openxmlformats.org/drawingml/2006/main"
_RNS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PKG = "http://schemas.openxmlformats.org/package/2006/relationships"


def _pptx_shape(paragraphs: list[str], placeholder: str = "") -> str:
    ph = f'<p:nvPr><p:ph type="{placeholder}"/></p:nvPr>' if placeholder else "<p:nvPr/>"
    runs = "".join(f"<a:p><a:r><a:t>{_xml(p)}</a:t></a:r></a:p>" for p in paragraphs)
    return f'<p:sp><p:nvSpPr><p:cNvPr id="1" name="s"/><p:cNvSpPr/>{ph}</p:nvSpPr><p:txBody>{runs}</p:txBody></p:sp>'


def pptx_bytes(
    slides: list[tuple[str, list[str], list[str]]], order: list[int] | None = None, title: str = ""
) -> bytes:
    """slides: (title, body paragraphs, speaker notes); order: the shown order of the slide files (default as given)."""
    members: dict[str, str] = {"[Content_Types].xml": "<Types/>"}
    order = order or list(range(1, len(slides) + 1))
    ids = "".join(f'<p:sldId id="{255 + n}" r:id="rId{n}"/>' for n in order)
    members["ppt/presentation.xml"] = (
        f'<p:presentation xmlns:p="{_PML}" xmlns:r="{_RNS}"><p:sldIdLst>{ids}</p:sldIdLst></p:presentation>'
    )
    rels = "".join(f'<Relationship Id="rId{n}" Type="{_RNS}/slide" Target="slides/slide{n}.xml"/>' for n in order)
    members["ppt/_rels/presentation.xml.rels"] = f'<Relationships xmlns="{_PKG}">{rels}</Relationships>'
    for n, (heading, body, notes) in enumerate(slides, 1):
        shapes = _pptx_shape([heading], "title") + _pptx_shape(body)
        members[f"ppt/slides/slide{n}.xml"] = (
            f'<p:sld xmlns:p="{_PML}" xmlns:a="{_DML}"><p:cSld><p:spTree>{shapes}</p:spTree></p:cSld></p:sld>'
        )
        if notes:
            members[f"ppt/slides/_rels/slide{n}.xml.rels"] = (
                f'<Relationships xmlns="{_PKG}"><Relationship Id="rId9" Type="{_RNS}/notesSlide"'
                f' Target="../notesSlides/notesSlide{n}.xml"/></Relationships>'
            )
            members[f"ppt/notesSlides/notesSlide{n}.xml"] = (
                f'<p:notes xmlns:p="{_PML}" xmlns:a="{_DML}"><p:cSld><p:spTree>'
                f"{_pptx_shape(['slide image'], 'sldImg')}{_pptx_shape(notes, 'body')}</p:spTree></p:cSld></p:notes>"
            )
    if title:
        members["docProps/core.xml"] = (
            '<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties"'
            f' xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>{_xml(title)}</dc:title></cp:coreProperties>'
        )
    return _zip(members)


def epub_bytes(chapters: list[tuple[str, str]], title: str = "", encrypted: bool = False) -> bytes:
    """chapters: (file name, XHTML body), in reading order; the spine lists them so."""
    manifest = "".join(
        f'<item id="c{i}" href="text/{name}" media-type="application/xhtml+xml"/>'
        for i, (name, _) in enumerate(chapters)
    )
    spine = "".join(f'<itemref idref="c{i}"/>' for i in range(len(chapters)))
    members = {
        "mimetype": "application/epub+zip",
        "META-INF/container.xml": (
            '<container xmlns="urn:oasis:names:tc:opendocument:xmlns:container" version="1.0"><rootfiles>'
            '<rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>'
        ),
        "OEBPS/content.opf": (
            '<package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata'
            f' xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>{_xml(title)}</dc:title></metadata>'
            f"<manifest>{manifest}</manifest><spine>{spine}</spine></package>"
        ),
    }
    for name, body in chapters:
        members[f"OEBPS/text/{name}"] = f'<html xmlns="http://www.w3.org/1999/xhtml"><body>{body}</body></html>'
    if encrypted:
        refs = "".join(
            '<enc:EncryptedData xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptionMethod'
            ' Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"/><enc:CipherData>'
            f'<enc:CipherReference URI="OEBPS/text/{name}"/></enc:CipherData></enc:EncryptedData>'
            for name, _ in chapters
        )
        members["META-INF/encryption.xml"] = (
            f'<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container">{refs}</encryption>'
        )
    return _zip(members)


def rtf_bytes(paragraphs: list[str], title: str = "") -> bytes:
    info = f"{{\\info{{\\title {title}}}}}" if title else ""
    body = "".join(f"{p}\\par\n" for p in paragraphs)
    return f"{{\\rtf1\\ansi\\deff0{{\\fonttbl{{\\f0 Times;}}}}{info}\n{body}}}".encode("latin-1")
