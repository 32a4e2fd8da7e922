"""E-mail: an .eml is one message, an .mbox one document per message.

The standard library's `email` parser (modern policy) decodes MIME, transfer
encodings and RFC 2047 headers.  The plain-text body is preferred; an HTML-only
message goes through the HTML extractor.  Subject, sender and date lead the text
(so they are searchable) and the date becomes the document's date (recency).
"""

from __future__ import annotations

import dataclasses
import re
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import parsedate_to_datetime

from kenning.ingest.extract.html import html_to_markdown
from kenning.ingest.extract.model import MARKDOWN, Extracted, ExtractionSkipped, Section, TextBudget

# mbox separates messages by lines starting "From " (mboxrd/mboxo quote body lines as ">From ").
_FROM_LINE = re.compile(rb"^From [^\n]*\n", re.MULTILINE)
_PARSER = BytesParser(policy=policy.default)


def extract_eml(raw: bytes) -> list[Extracted]:
    message = _message(raw, TextBudget())
    if message is None:
        raise ExtractionSkipped("empty", "no headers or body found")
    return [message]


def extract_mbox(raw: bytes) -> list[Extracted]:
    if not raw.startswith(b"From "):
        raise ExtractionSkipped("malformed", "an mbox starts with a 'From ' line")
    budget = TextBudget()
    out = []
    starts = [m.start() for m in _FROM_LINE.finditer(raw)]
    for number, (start, end) in enumerate(zip(starts, [*starts[1:], len(raw)]), 1):
        if budget.exhausted:
            break
        body_start = raw.index(b"\n", start) + 1
        message = _message(raw[body_start:end], budget)
        if message is not None:
            out.append(Extracted(message.title, message.sections, message.meta, message.date, str(number)))
    if out and (budget.truncated or len(out) < len(starts) and budget.exhausted):
        last = out[-1]
        out[-1] = dataclasses.replace(
            last, meta={**last.meta, "truncated": "messages beyond the per-file text limit were left out"}
        )
    return out


def _message(raw: bytes, budget: TextBudget) -> Extracted | None:
    try:
        message = _PARSER.parsebytes(raw)
    except Exception as exc:  # the parser is lenient; anything else is a truly broken file
        raise ExtractionSkipped("malformed", f"{type(exc).__name__}: {exc}") from exc
    subject = _header(message, "subject")
    sender = _header(message, "from")
    date_text = _header(message, "date")
    body = _body(message)
    if not (subject or sender or body.strip()):
        return None
    date = _timestamp(date_text)
    lead = "\n".join(f"{name}: {value}" for name, value in (("From", sender), ("Date", date_text)) if value)
    # The subject as a level-1 heading gives every chunk of a long mail its context.
    text = budget.take(f"# {subject or '(no subject)'}\n\n{lead}\n\n{body.strip()}\n")
    meta = {k: v for k, v in (("sender", sender), ("date", date_text), ("to", _header(message, "to"))) if v}
    return Extracted(subject or "(no subject)", (Section(text, MARKDOWN),), meta, date)


def _header(message: EmailMessage, name: str) -> str:
    try:
        value = message.get(name)
    except Exception:  # a malformed encoded-word; the header is simply missing
        return ""
    return " ".join(str(value).split()) if value is not None else ""


def _body(message: EmailMessage) -> str:
    try:
        part = message.get_body(preferencelist=("plain", "html"))
        if part is None:
            return ""
    except Exception:  # a broken MIME tree: say nothing rather than fail the mailbox
        return ""
    try:
        content = part.get_content()
    except Exception:  # an unknown charset ("klingon"): the bytes as UTF-8, undecodable ones replaced
        payload = part.get_payload(decode=True)
        content = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else ""
    if not isinstance(content, str):
        return ""
    if part.get_content_subtype() == "html":
        return html_to_markdown(content)[0]
    # Quoted "From " lines (mboxrd) lose their quote; quoted replies keep "> ".
    return re.sub(r"^>(>*From )", r"\1", content, flags=re.MULTILINE)


def _timestamp(date_text: str) -> float | None:
    if not date_text:
        return None
    try:
        return parsedate_to_datetime(date_text).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
