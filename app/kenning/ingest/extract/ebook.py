"""EPUB: the book's chapters in reading order, each read by the HTML extractor.

An EPUB is a zip: META-INF/container.xml names the package (OPF) file, whose manifest
lists the parts and whose spine gives the reading order.  zipfile and defusedxml read
them (ebooklib would add lxml and read every part, images included, into memory) with
the limits every Office archive gets (office.open_archive, read_member); each chapter's
XHTML goes through html.html_to_markdown, so its headings give the heading path.  A
chapter is located `ch. N` (its place in the spine).  A book whose chapters are
encrypted (DRM, declared in META-INF/encryption.xml) is skipped as `encrypted`; fonts
obfuscated the way the EPUB standard allows do not count.
"""

from __future__ import annotations

import posixpath
import zipfile
from urllib.parse import unquote
from xml.etree.ElementTree import Element

from kenning.ingest.extract.html import html_to_markdown
from kenning.ingest.extract.model import MARKDOWN, Extracted, ExtractionSkipped, Section, TextBudget
from kenning.ingest.extract.office import open_archive, parse_member, read_member

_CONTAINER = "{urn:oasis:names:tc:opendocument:xmlns:container}"
_OPF = "{http://www.idpf.org/2007/opf}"
_DC = "{http://purl.org/dc/elements/1.1/}"
_ENC = "{http://www.w3.org/2001/04/xmlenc#}"
_DOCUMENT_TYPES = {"application/xhtml+xml", "text/html", "application/x-dtbook+xml"}
MAX_CHAPTERS = 5000


def extract_epub(raw: bytes) -> list[Extracted]:
    budget = TextBudget()
    sections = []
    with open_archive(raw) as archive:
        package = _package_path(archive)
        opf = parse_member(archive, package)
        title = _title(opf)
        chapters = _spine(opf, posixpath.dirname(package))
        encrypted = _encrypted_parts(archive)
        if encrypted & set(chapters):
            raise ExtractionSkipped("encrypted", "the book's chapters are encrypted (DRM)")
        names = set(archive.namelist())
        for number, part in enumerate(chapters[:MAX_CHAPTERS], 1):
            if part not in names:
                continue
            text, chapter_title = html_to_markdown(read_member(archive, part))
            if text.strip():
                sections.append(Section(budget.take(text), MARKDOWN, f"ch. {number}", chapter_title))
            if budget.exhausted:
                break
    meta = {"chapters": str(len(sections))}
    if budget.truncated:
        meta["truncated"] = "text beyond the per-file limit was left out"
    return [Extracted(title, tuple(sections), meta)]


def _package_path(archive: zipfile.ZipFile) -> str:
    container = parse_member(archive, "META-INF/container.xml")
    rootfile = container.find(f".//{_CONTAINER}rootfile")
    path = rootfile.get("full-path") if rootfile is not None else None
    if not path:
        raise ExtractionSkipped("malformed", "META-INF/container.xml names no package file")
    return posixpath.normpath(unquote(path))


def _title(opf: Element) -> str:
    node = opf.find(f"{_OPF}metadata/{_DC}title")
    return " ".join((node.text or "").split()) if node is not None else ""


def _spine(opf: Element, folder: str) -> list[str]:
    """The archive names of the spine's documents, in reading order."""
    manifest: dict[str, str] = {}
    for item in opf.iter(f"{_OPF}item"):
        href, media = item.get("href") or "", item.get("media-type") or ""
        if href and media in _DOCUMENT_TYPES:
            manifest[item.get("id") or ""] = posixpath.normpath(posixpath.join(folder, unquote(href.split("#")[0])))
    ordered = [manifest[ref.get("idref") or ""] for ref in opf.iter(f"{_OPF}itemref") if ref.get("idref") in manifest]
    return list(dict.fromkeys(ordered)) or sorted(set(manifest.values()))


def _encrypted_parts(archive: zipfile.ZipFile) -> set[str]:
    """Parts encrypted other than by the standard font obfuscation."""
    if "META-INF/encryption.xml" not in archive.namelist():
        return set()
    out = set()
    for data in parse_member(archive, "META-INF/encryption.xml").iter(f"{_ENC}EncryptedData"):
        method = data.find(f"{_ENC}EncryptionMethod")
        algorithm = method.get("Algorithm", "") if method is not None else ""
        if "obfuscation" in algorithm or algorithm.endswith("font"):
            continue
        reference = data.find(f".//{_ENC}CipherReference")
        if reference is not None and reference.get("URI"):
            out.add(posixpath.normpath(unquote(reference.get("URI", ""))))
    return out
