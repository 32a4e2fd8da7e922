"""HTML: the main text of a saved page or generated doc, headings as markdown headings.

Lexbor (through selectolax) parses like a browser, in C, and copes with tag soup,
50 MB single-line pages and deeply nested markup without recursing in Python.  The
page is reduced to markdown-like text so it is chunked exactly like a note: headings
give the heading path.
"""

from __future__ import annotations

import re

from selectolax.lexbor import LexborHTMLParser, LexborNode

from kenning.ingest.extract.model import MARKDOWN, MAX_TEXT_CHARS, Extracted, Section, TextBudget

# Never the page's content: chrome, code that runs, and things that are not text.
_DROP = ("script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "form", "button")
_CHROME = ("nav", "aside", "footer", "[role=navigation]", "[role=banner]", "[role=contentinfo]", "[aria-hidden=true]")
_BLOCKS = ("p", "div", "section", "article", "table", "tr", "blockquote", "dl", "dt", "dd", "figure", "ul", "ol", "hr")
_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
_SPACES = re.compile(r"[^\S\n]+")
_BLANKS = re.compile(r"\n\s*\n\s*")


def extract_html(raw: bytes) -> list[Extracted]:
    text, title = html_to_markdown(raw)
    budget = TextBudget()
    text = budget.take(text)
    meta = {"truncated": "text beyond the per-file limit was left out"} if budget.truncated else {}
    return [Extracted(title, (Section(text, MARKDOWN),) if text.strip() else (), meta)]


def html_to_markdown(raw: bytes | str) -> tuple[str, str]:
    """(markdown-like text of the main content, page title)."""
    tree = LexborHTMLParser(raw)
    title_node = tree.css_first("title")
    title = " ".join(title_node.text().split()) if title_node else ""
    tree.strip_tags(list(_DROP))
    root = _main_content(tree)
    if root is None:
        return "", title
    for selector in _CHROME:
        for node in root.css(selector):
            node.decompose()
    _mark_structure(root)
    # Tidy no more than could be kept: a 50 MB one-line page costs seconds, not minutes.
    text = root.text(deep=True, separator="")[: 2 * MAX_TEXT_CHARS]
    text = _tidy(text)
    if not title:
        first = root.css_first("h1")
        title = " ".join(first.text().split()) if first else ""
    return text.strip() + "\n", title


def _tidy(text: str) -> str:
    """Collapse the markup's spaces and blank lines, except inside code blocks (indentation)."""
    lines, fenced = [], False
    for line in text.split("\n"):
        if line.strip() == "```":
            fenced = not fenced
            lines.append("```")
        else:
            lines.append(line.rstrip() if fenced else _SPACES.sub(" ", line).strip())
    return _BLANKS.sub("\n\n", "\n".join(lines))


def _main_content(tree: LexborHTMLParser) -> LexborNode | None:
    for selector in ("main", "article", "[role=main]"):
        found = tree.css(selector)
        if len(found) == 1:
            return found[0]
    body = tree.body
    if body is not None:
        for node in body.css("header"):
            node.decompose()
    return body


def _mark_structure(root: LexborNode) -> None:
    """Turn headings, lists, code blocks and block ends into markdown line breaks."""
    for level, tag in enumerate(_HEADINGS, 1):
        for node in root.css(tag):
            words = " ".join(node.text().split())
            node.replace_with(f"\n\n{'#' * level} {words}\n\n" if words else "\n")
    for node in root.css("pre"):
        code = node.text().strip("\n")
        node.replace_with(f"\n\n```\n{code}\n```\n\n" if code.strip() else "\n")
    for node in root.css("li"):
        node.insert_before("\n- ")
    for node in root.css("br"):
        node.replace_with("\n")
    for node in root.css(", ".join(_BLOCKS)):
        node.insert_before("\n\n")
        node.insert_after("\n\n")
    for node in root.css("td, th"):
        node.insert_after(" | ")
