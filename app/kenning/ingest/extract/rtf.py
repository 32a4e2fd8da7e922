"""Rich Text Format (.rtf): the text without its control words, by striprtf.

RTF is 7-bit text whose control words say how to show it; striprtf (pure Python, no
dependencies) drops them, the font and colour tables, pictures and other destinations,
and decodes `\\'hh` and `\\uN` escapes with the document's code page.  Bytes are read
as Latin-1, which cannot fail, so a stray 8-bit byte costs one character, not the file.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from kenning.ingest.extract.model import TEXT, Extracted, ExtractionSkipped, Section, TextBudget

_TITLE = re.compile(rb"\\title\s+([^{}\\]{1,300})")


def extract_rtf(raw: bytes) -> list[Extracted]:
    from striprtf import striprtf

    rtf_to_text: Callable[..., str] = striprtf.rtf_to_text  # striprtf has no annotations
    if not raw.lstrip()[:5] == b"{\\rtf":
        raise ExtractionSkipped("malformed", "not an RTF document (no {\\rtf header)")
    plain = rtf_to_text(raw.decode("latin-1"), errors="ignore")
    budget = TextBudget()
    text = budget.take("\n".join(line.rstrip() for line in plain.replace("\r", "").split("\n")).strip())
    match = _TITLE.search(raw[:65536])
    title = " ".join(match.group(1).decode("latin-1").split()) if match else ""
    if not title:
        title = next((line.strip() for line in text.split("\n") if line.strip()), "")[:200]
    meta = {"truncated": "text beyond the per-file limit was left out"} if budget.truncated else {}
    return [Extracted(title, (Section(text + "\n", TEXT),) if text else (), meta)]
