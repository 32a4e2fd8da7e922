"""Text out of documents that are not plain text: PDF, HTML, notebooks, Office (text,
spreadsheets, slides), e-books, RTF, e-mail.

`extract_file` is the one entry point the indexer calls.  It runs the format's
extractor in a worker process (worker.py) with a time and memory limit, so a hostile
or broken file costs at most itself; every failure comes back as a skip reason.
"""

from __future__ import annotations

import atexit
import dataclasses
import re
import threading
from collections.abc import Callable

from kenning.ingest.extract.model import (
    MAX_FILE_BYTES,
    Extracted,
    Extraction,
    ExtractionSkipped,
    Section,
    titled,
)

__all__ = [
    "EXTRACTED_KINDS",
    "Extracted",
    "Extraction",
    "Section",
    "extract_file",
    "extract_in_process",
    "is_extracted",
    "size_cap_for",
]


def _pdf(raw: bytes) -> list[Extracted]:
    from kenning.ingest.extract.pdf import extract_pdf

    return extract_pdf(raw)


def _html(raw: bytes) -> list[Extracted]:
    from kenning.ingest.extract.html import extract_html

    return extract_html(raw)


def _notebook(raw: bytes) -> list[Extracted]:
    from kenning.ingest.extract.notebook import extract_notebook

    return extract_notebook(raw)


def _docx(raw: bytes) -> list[Extracted]:
    from kenning.ingest.extract.office import extract_docx

    return extract_docx(raw)


def _odt(raw: bytes) -> list[Extracted]:
    from kenning.ingest.extract.office import extract_odt

    return extract_odt(raw)


def _xlsx(raw: bytes) -> list[Extracted]:
    from kenning.ingest.extract.sheets import extract_xlsx

    return extract_xlsx(raw)


def _ods(raw: bytes) -> list[Extracted]:
    from kenning.ingest.extract.sheets import extract_ods

    return extract_ods(raw)


def _pptx(raw: bytes) -> list[Extracted]:
    from kenning.ingest.extract.slides import extract_pptx

    return extract_pptx(raw)


def _odp(raw: bytes) -> list[Extracted]:
    from kenning.ingest.extract.slides import extract_odp

    return extract_odp(raw)


def _epub(raw: bytes) -> list[Extracted]:
    from kenning.ingest.extract.ebook import extract_epub

    return extract_epub(raw)


def _rtf(raw: bytes) -> list[Extracted]:
    from kenning.ingest.extract.rtf import extract_rtf

    return extract_rtf(raw)


def _eml(raw: bytes) -> list[Extracted]:
    from kenning.ingest.extract.mail import extract_eml

    return extract_eml(raw)


def _mbox(raw: bytes) -> list[Extracted]:
    from kenning.ingest.extract.mail import extract_mbox

    return extract_mbox(raw)


# Document kind -> extractor.  The kinds are what filetypes.classify returns for them.
_EXTRACTORS: dict[str, Callable[[bytes], list[Extracted]]] = {
    "pdf": _pdf,
    "html": _html,
    "notebook": _notebook,
    "docx": _docx,
    "odt": _odt,
    "xlsx": _xlsx,
    "ods": _ods,
    "pptx": _pptx,
    "odp": _odp,
    "epub": _epub,
    "rtf": _rtf,
    "eml": _eml,
    "mbox": _mbox,
}
EXTRACTED_KINDS = frozenset(_EXTRACTORS)
# Containers whose messages become documents of their own ("inbox.mbox#3").
CONTAINER_KINDS = frozenset({"mbox"})


def is_extracted(kind: str) -> bool:
    return kind in EXTRACTED_KINDS


def size_cap_for(kind: str, text_cap: int) -> int:
    """Byte cap for a file of this kind: documents are bigger than the notes they sit beside."""
    return max(text_cap, MAX_FILE_BYTES) if kind in EXTRACTED_KINDS else text_cap


def extract_in_process(raw: bytes, kind: str, max_bytes: int, name: str = "") -> Extraction:
    """Run the extractor here on a file's bytes, turning every failure into a skip reason.

    Extractors are given bytes, never a path: the indexer read the file (from its
    source's root, component by component) and hashed exactly these bytes.  `name` is
    the file's name, for titles only (a generator's title says less than it)."""
    extractor = _EXTRACTORS.get(kind)
    if extractor is None:
        return Extraction(skip_reason="unsupported", detail=f"no extractor for {kind!r}")
    if len(raw) > max_bytes:
        return Extraction(skip_reason="too-large", detail=f"more than {max_bytes} bytes")
    try:
        documents = extractor(raw)
    except ExtractionSkipped as exc:
        return Extraction(skip_reason=exc.reason, detail=_plain(exc.detail, MAX_DETAIL_CHARS))
    except MemoryError:
        return Extraction(skip_reason="too-large", detail="extraction exceeded the memory limit")
    except RecursionError:
        return Extraction(skip_reason="malformed", detail="nested too deeply")
    except OSError as exc:
        return Extraction(skip_reason="unreadable", detail=f"{type(exc).__name__}: {exc}")
    except Exception as exc:  # a parser's own bug on a strange file costs that file only
        return Extraction(skip_reason="malformed", detail=_plain(f"{type(exc).__name__}: {exc}", MAX_DETAIL_CHARS))
    if not any(doc.sections for doc in documents):
        return Extraction(skip_reason="empty", detail="no text found")
    return Extraction(
        tuple(dataclasses.replace(doc, title=_plain(titled(doc, name).title, MAX_TITLE_CHARS)) for doc in documents)
    )


MAX_TITLE_CHARS = 300
MAX_DETAIL_CHARS = 300
# Titles and skip details come from the file (PDF metadata, mail subjects, parser
# messages quoting it) and end up on terminals: no control characters, one line.
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f]+")


def _plain(text: str, limit: int) -> str:
    return " ".join(_CONTROLS.sub(" ", text).split())[:limit]


_worker = None
_worker_lock = threading.Lock()


def extract_file(raw: bytes, kind: str, max_bytes: int, name: str = "") -> Extraction:
    """Extract a file's bytes in the shared worker process (time- and memory-limited)."""
    global _worker
    with _worker_lock:
        if _worker is None:
            from kenning.ingest.extract.worker import ExtractionWorker

            _worker = ExtractionWorker()
            atexit.register(_worker.close)
        worker = _worker
    return worker.extract(raw, kind, max_bytes, name)
