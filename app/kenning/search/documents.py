"""The text of a hit's document as indexed, for previews of files not read as text."""

from __future__ import annotations

from kenning.storage.api import Store

# Kinds whose file on disk is the text itself; every other kind was extracted (PDF, mail...).
_TEXT_KINDS = ("markdown", "text")
_CODE_PREFIX = "code:"


def extracted_text(store: Store, source: str, rel_path: str) -> str | None:
    """The extracted text of a PDF, notebook, Office file or message; None for a plain-text file."""
    kind = store.documents.kind(source, rel_path)
    if kind is None or kind in _TEXT_KINDS or kind.startswith(_CODE_PREFIX):
        return None
    return store.documents.text(source, rel_path)
