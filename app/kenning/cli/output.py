"""Turning search results and reports into text or JSON lines (the store returns data)."""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Iterable

from kenning import TYPE_CHECKING
from kenning.cli.terminal import HIGHLIGHT_OFF, HIGHLIGHT_ON, one_line, printable
from kenning.core.fsnames import text_only
from kenning.core.types import (
    LACKS_PHRASES_LABEL,
    MEANING_ONLY_LABEL,
    NEIGHBOURS_LIST,
    Breakdown,
    Hit,
    IndexReport,
    SearchResult,
)
from kenning.search.browse import DATE_LIST, FILTER_ONLY_ORDER
from kenning.search.browse import LAYER as FILTER_LAYER
from kenning.search.definitions import LIST as DEFINITION_LIST
from kenning.workspace.obsidian import obsidian_url

if TYPE_CHECKING:
    from typing import Any

    from kenning.workspace.links import Link, NoteLinks


def breakdown_dict(b: Breakdown) -> dict[str, Any]:
    return {
        "lists": {name: dataclasses.asdict(s) for name, s in b.lists.items()},
        "fused": b.fused,
        "proximity": b.proximity,
        "proximity_parts": b.proximity_parts,
        "normaliser": b.normaliser,
        "relevance": b.relevance,
        "spread": b.spread,
        "base": b.base,
        "cosine": b.cosine,
        "recency": b.recency,
        "recency_bonus": b.recency_bonus,
        "git": b.git,
        "git_bonus": b.git_bonus,
        "git_paths": list(b.git_paths),
        "ambiguous_links": list(b.ambiguous_links),
        "penalty": b.penalty,
        "final": b.final,
        "shown": b.shown,
        "layer": b.layer,
        "corrections": b.corrections,
        "fusion": b.fusion,
        "expansion": list(b.expansion),
        "moved_toward": b.moved_toward,
        "sentences": b.sentences,
        "opening": b.opening,
        "opening_weight": b.opening_weight,
        "lacks_phrases": b.lacks_phrases,
        "quotation": b.quotation,
    }


def hit_dict(hit: Hit, explain: bool) -> dict[str, Any]:
    out = {
        "chunk_id": hit.chunk_id,
        "source": hit.source,
        "path": hit.path,
        "abs_path": hit.abs_path,
        "title": hit.title,
        "line_start": hit.line_start,
        "line_end": hit.line_end,
        "location": hit.location,
        "snippet": hit.snippet,
        "spans": [list(span) for span in hit.spans],
        "score": hit.score,
        "layer": hit.breakdown.layer,
        "meaning_only": hit.meaning_only,
        "lacks_phrases": hit.breakdown.lacks_phrases,
    }
    if hit.store_label:
        out["store"] = hit.store_label
    url = obsidian_url(hit.abs_path)
    if url:
        out["obsidian_url"] = url
    if explain:
        out["breakdown"] = breakdown_dict(hit.breakdown)
    return out


def print_json_lines(result: SearchResult, explain: bool, mode: str, write: Callable[..., object] = print) -> None:
    """JSON lines: first what the search meant (the mode that answered, notes such as
    `source:nosuch names no source`, corrections, did-you-mean), then one line per hit."""
    from kenning.workspace.answers import SCHEMA_VERSION, search_record

    summary = {"type": "search", "version": SCHEMA_VERSION, **search_record(result, mode), "hits": len(result.hits)}
    write(json.dumps(text_only(summary), ensure_ascii=False))
    for hit in result.hits:
        write(json.dumps(text_only({"type": "hit", **hit_dict(hit, explain)}), ensure_ascii=False))


def print_human(result: SearchResult, explain: bool, write: Callable[..., object] = print, color: bool = False) -> None:
    for note in result.notes:
        write(f"note: {note}")
    if result.banner():
        write(result.banner())
    if result.layer == FILTER_LAYER and result.hits:
        write(FILTER_ONLY_ORDER)
    if not result.hits:
        write("No results.")
    for i, hit in enumerate(result.hits, 1):
        after_phrases = hit.breakdown.lacks_phrases and not hit.breakdown.quotation
        if after_phrases and (i == 1 or not result.hits[i - 2].breakdown.lacks_phrases):
            write(f"    — results for the words, each {LACKS_PHRASES_LABEL} —")
        snippet = marked_snippet(hit.snippet, hit.spans, color)
        tags = [MEANING_ONLY_LABEL] if hit.meaning_only else []
        if hit.breakdown.lacks_phrases and hit.breakdown.quotation:  # ranked among the holders: say which
            tags.append(LACKS_PHRASES_LABEL)
        label = f"  ({', '.join(tags)})" if tags else ""
        # A title, a source name and a path may hold any character: each stays on its line.
        write(f"{i:>2}. {hit.score:.3f}  {one_line(hit.title)}{label}")
        store = f"[{printable(hit.store_label)}] " if hit.store_label else ""  # several stores searched together
        write(f"    {store}{one_line(f'{hit.source}:{hit.path}:{place(hit)}')}")
        write(f"    {snippet}")
        if explain:
            for line in explain_lines(hit.breakdown):
                write(f"      {line}")
            url = obsidian_url(hit.abs_path)
            if url:
                write(f"      open in Obsidian: {url}")
    if result.suggestion:
        write(f"Did you mean: {result.suggestion}")


def place(hit: Hit) -> str:
    """Where the hit is: "p. 12" / "cell 3" in an extracted document, else its lines."""
    return hit.location or f"{hit.line_start}-{hit.line_end}"


def marked_snippet(snippet: str, spans: Iterable[tuple[int, int]], color: bool) -> str:
    """The snippet safe for a terminal, matched words bold from their spans (on a TTY only).

    Nothing in the text is parsed: brackets in a note stay brackets.  Control characters
    (an escape sequence hidden in a hostile file) are replaced one for one, so the spans
    still line up.
    """
    text = printable(snippet)
    if not color:
        return text
    out, cursor = [], 0
    for start, end in spans:
        # Kenning's own marks: the terminal stream turns them into colour.
        out += [text[cursor:start], HIGHLIGHT_ON, text[start:end], HIGHLIGHT_OFF]
        cursor = end
    out.append(text[cursor:])
    return "".join(out)


def explain_lines(b: Breakdown) -> list[str]:
    from kenning.search import explain  # --explain alone

    lines = []
    if b.corrections:
        lines.append("words    searched as " + ", ".join(f"{a} → {c}" for a, c in b.corrections.items()))
    for name, s in b.lists.items():
        if name == DATE_LIST:
            day = time.strftime("%Y-%m-%d", time.gmtime(s.score))
            lines.append(f"{name:<8} rank {s.rank:>3}  {day}  weight {s.weight:.2f}  +{s.contribution:.5f}")
            lines.append(f"         {FILTER_ONLY_ORDER}")
            continue
        lines.append(f"{name:<8} rank {s.rank:>3}  score {s.score:9.4f}  weight {s.weight:.2f}  +{s.contribution:.5f}")
        if s.by_rank_of:
            lines.append(f"         {explain.contribution_rule(b, s)}")
        if name == "feedback" and b.expansion:
            lines.append(f"         words of the best first hits: {', '.join(b.expansion)}")
        if name == "vector" and b.moved_toward:
            lines.append(f"         {explain.moved_note(b)}")
        if name == "vector" and b.sentences:
            lines.append(f"         {explain.sentences_note(b)}")
        if name == "vector" and b.opening is not None:
            lines.append(f"         {explain.opening_note(b)}")
        if name == DEFINITION_LIST:
            lines.append(f"         {explain.DEFINITION_NOTE}")
        if name == NEIGHBOURS_LIST:
            lines.append(f"         {explain.NEIGHBOURS_NOTE}")
    if b.lists and DATE_LIST not in b.lists:
        lines.append(f"fused     {b.fused:.5f}: {explain.fusion_rule(b)}")
    lines.append(f"proximity +{b.proximity:.5f} ({explain.proximity_parts(b)})")
    lines.append(f"relevance ({b.fused:.5f} + {b.proximity:.5f}) / {b.normaliser:.5f} = {b.relevance:.4f}")
    lines.append(f"base      {explain.base_formula(b)} = {b.base:.4f}")
    cosine = "n/a" if b.cosine is None else f"{b.cosine:.4f}"
    lines.append(f"cosine    {cosine}")
    lines.append(f"recency   {b.recency:.3f} → +{b.recency_bonus:.4f}  ({explain.recency_rule()})")
    paths = f" ({', '.join(b.git_paths)})" if b.git_paths else ""
    lines.append(f"git       {b.git:.3f} → +{b.git_bonus:.4f}{paths}")
    lines.append(f"          ({explain.git_rule()})")
    for link in b.ambiguous_links:
        lines.append(f"          ambiguous link, not counted: {printable(link)}")
    rule = f"  ({explain.penalty_rule()})" if b.penalty < 1 else ""
    lines.append(f"penalty   ×{b.penalty:.2f}{rule}")
    lines.append(f"final     {b.final:.4f}  [{b.layer}]  (the order)")
    lines.append(f"score     {explain.shown_formula(b)} = {b.shown:.4f}  (shown)")
    phrase_note = explain.phrase_rule(b)
    if phrase_note:
        lines.append(f"{'phrases' if b.quotation else 'order':<9} {phrase_note}")
    return lines


def print_report(report: IndexReport, write: Callable[..., object] = print) -> None:
    write(
        f"{one_line(report.source)}: {report.files_seen} files seen, {report.added} added, "
        f"{report.changed} changed, {report.unchanged} unchanged, {report.removed} removed, "
        f"{report.chunks_written} chunks written, {len(report.skipped)} skipped"
        + (" (cancelled)" if report.cancelled else "")
    )
    for error in report.errors:
        write(f"  error: {one_line(error)}")


def print_note_links(found: NoteLinks, *, mentions: bool = True, write: Callable[..., object] = print) -> None:
    """A note's links out, backlinks and unlinked mentions, one `source:path:line` each."""
    note = found.note
    write(printable(f"{note.source}:{note.path}  ({note.title})"))
    write(printable(f"  names: {', '.join(found.names)}"))
    write(f"links ({len(found.outgoing)}):")
    for link in found.outgoing:
        write("  " + printable(f"line {link.line}: {_link_markup(link)} {_where_it_goes(link)}"))
    write(f"backlinks ({len(found.backlinks)}):")
    for link in found.backlinks:
        write("  " + printable(f"{link.origin.source}:{link.origin.path}:{link.line}  {link.context}"))
    if mentions:
        write(f"unlinked mentions ({len(found.mentions)}):")
        for m in found.mentions:
            write("  " + printable(f"{m.origin.source}:{m.origin.path}:{m.line}  {m.context}"))


def print_unresolved(links: list[Link], write: Callable[..., object] = print) -> None:
    if not links:
        write("No unresolved links.")
    for link in links:
        write(
            printable(
                f"{link.origin.source}:{link.origin.path}:{link.line}: {_link_markup(link)} {_where_it_goes(link)}"
            )
        )


def _link_markup(link: Link) -> str:
    return f"{'!' if link.embed else ''}[[{link.target}]]"


def _where_it_goes(link: Link) -> str:
    if link.to is not None:
        return f"→ {link.to.path}"
    if link.status == "ambiguous":
        return f"(ambiguous: {', '.join(link.candidates)})"
    return "(unresolved: no such note)"
