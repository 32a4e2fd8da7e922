"""One function per command; each returns an exit code."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from kenning import TYPE_CHECKING
from kenning.cli.context import workspace_for
from kenning.cli.editor import print_editor_format
from kenning.cli.terminal import TerminalProgress, one_line, printable
from kenning.core import KenningError
from kenning.core.fsnames import text_only
from kenning.workspace import describe_repo, log_file
from kenning.workspace import settings as settings_def
from kenning.workspace.searching import MODEL_LOAD_NOTE
from kenning.workspace.sources import SourceOverview

if TYPE_CHECKING:
    from kenning.ingest.watch import WatchUpdate
    from kenning.workspace import Workspace

MODEL_LOAD_NOTE_MIN_SECONDS = 0.2  # the fake test model loads in no time: nothing to state


def _context(args: argparse.Namespace) -> Workspace:
    """The command's workspace: one per command, closed by main when the command ends
    (inside the service, the session's: its store and model, kept; see cli.served)."""
    session = getattr(args, "session", None)
    if session is not None:
        served: Workspace = session.workspace(args)
        return served
    if getattr(args, "workspace", None) is None:
        args.workspace = workspace_for(args)
    workspace: Workspace = args.workspace
    return workspace


def close_workspace(args: argparse.Namespace) -> None:
    session = getattr(args, "session", None)
    if session is not None:
        session.release(args)
    elif getattr(args, "workspace", None) is not None:
        args.workspace.close()


def cmd_gui(args: argparse.Namespace) -> int:
    if args.open_gui is None:
        print("kenning: no desktop app from this entry point; run `kenning` or `kenning-gui`.", file=sys.stderr)
        return 2
    return int(args.open_gui(Path(args.store) if args.store else None))


def cmd_sources(args: argparse.Namespace) -> int:
    ws = _context(args)
    action = args.sources_command
    if action == "add":
        adder = ws.link_repo if args.git else ws.add_folder
        source = adder(
            args.path,
            name=args.name,
            include=tuple(args.include),
            exclude=tuple(args.exclude),
            allow_private=args.allow_private_folder,
        )
        print(one_line(f"Added {source.kind} source '{source.name}': {source.root}"))
        if args.git:
            _print_repo(source.root)
        print("Run `kenning index` to index it.")
    elif action == "list" and args.names:
        for source in ws.list_sources():
            print(printable(f"source:{source.name}" if args.as_filter else source.name))
    elif action == "list":
        _list_sources(ws.overview())
    elif action == "remove":
        source = ws.remove_source(args.name)
        print(one_line(f"Removed '{source.name}' and everything indexed from it."))
    elif action in ("enable", "disable"):
        source = ws.set_enabled(args.name, action == "enable")
        print(one_line(f"{source.name}: {action}d"))
    elif action == "globs":
        source = ws.set_globs(args.name, tuple(args.include), tuple(args.exclude))
        print(one_line(f"{source.name}: include {list(source.include) or ['*']}, exclude {list(source.exclude)}"))
    return 0


def _print_repo(root: str) -> None:
    """The branch and last commit of a repository just linked (the README promises them)."""
    try:
        info = describe_repo(root)
    except KenningError:
        return  # it was validated a moment ago; describing it is a courtesy, not a check
    if not info.head_sha:
        print(f"  branch {printable(info.branch)}, no commits yet")
        return
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(info.last_commit_time)) if info.last_commit_time else "?"
    dirty = " (uncommitted changes)" if info.dirty else ""
    print(f"  branch {printable(info.branch)}{dirty}")
    print(f"  last commit {info.head_sha[:7]} {printable(info.last_commit_summary)}")
    print(f"    by {printable(info.last_commit_author or '?')}, {when}")


def _list_sources(overview: SourceOverview) -> None:
    if not overview.sources:
        print("No sources yet. Add one with `kenning sources add PATH` (or --git for a repository).")
    for s in overview.sources:
        st = overview.stats.get(s.id)
        state = "" if s.enabled else " (disabled)"
        print(one_line(f"{s.name}{state}  [{s.kind}]  {s.root}"))
        if st:
            print(
                f"    {st.documents} documents, {st.chunks} chunks, {st.pending_vectors} vectors pending, {st.skipped} skipped"
            )


def cmd_index(args: argparse.Namespace) -> int:
    from kenning.cli.output import print_report
    from kenning.core.progress import CancelToken

    ws = _context(args)
    if not args.name and not ws.list_sources():
        print("No sources to index. Add one with `kenning sources add PATH`.")
        return 0
    progress = TerminalProgress()
    cancel = CancelToken()
    try:
        run = ws.index([args.name] if args.name else None, embed=not args.no_embed, on_progress=progress, cancel=cancel)
    except KeyboardInterrupt:
        cancel.cancel()
        progress.finish()
        raise
    progress.finish()
    for report in run.reports:
        print_report(report)
    if run.embedding:
        s = run.embedding
        print(f"embeddings: {s.embedded} embedded, {s.reused} reused from cache in {s.seconds:.1f}s")
    if args.watch:
        return _watch(ws, embed=not args.no_embed)
    return 1 if any(r.errors for r in run.reports) else 0


def _watch(ws: Workspace, *, embed: bool) -> int:
    """Index changes as they happen until Ctrl+C or SIGTERM (the window does the same while open)."""
    import signal
    import threading

    watcher = ws.watcher(
        embed=embed, on_update=_print_watch_update, on_notice=lambda text: print(one_line(f"note: {text}"))
    )
    stop = threading.Event()
    # `kill` ends the watch as Ctrl+C does: a watch started as a background job (`&` in a
    # script) has Ctrl+C ignored by its shell, and SIGTERM is what service managers send.
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        # Said once the watches are in place: a change made after this line is seen.
        watcher.run(stop, on_ready=lambda: print("Watching the sources for changes; Ctrl+C stops.", flush=True))
    except KeyboardInterrupt:
        stop.set()
        print("\nkenning: stopped watching.", file=sys.stderr)
    finally:
        signal.signal(signal.SIGTERM, previous)
    return 0


def _print_watch_update(update: WatchUpdate) -> None:
    if update.embedded and not update.reports:
        print(f"  vectors: {update.embedded} chunks embedded", flush=True)
        return
    for report in update.reports:
        parts = [
            f"{n} {label}"
            for n, label in ((report.added, "new"), (report.changed, "changed"), (report.removed, "removed"))
            if n
        ]
        for error in report.errors:
            parts.append(f"error: {error}")
        if parts:
            line = f"{time.strftime('%H:%M:%S')} {report.source}: {', '.join(parts)} ({update.seconds * 1000:.0f} ms)"
            print(one_line(line), flush=True)


def cmd_status(args: argparse.Namespace) -> int:
    ws = _context(args)
    status = ws.status()
    if args.json:
        import json

        from kenning.workspace.answers import status_record

        log = log_file()
        print(json.dumps(text_only(status_record(status, str(log) if log else None)), ensure_ascii=False))
        return 0
    print(f"store: {status.path} ({status.size_bytes / 1e6:.1f} MB)")
    if ws.is_team:
        print("vector index: pgvector, HNSW (cosine), on the team store's server")
    print(f"model: {status.model}")
    print(f"log: {log_file() or 'not written (the log folder cannot be created)'}")
    overview = status.overview
    _list_sources(overview)
    print(f"total: {overview.documents} documents, {overview.chunks} chunks, {status.pending_vectors} vectors pending")
    print(status.semantic_text)
    skipped = status.skipped
    if skipped:
        print(f"skipped files ({len(skipped)}):")
        for name, s in skipped[:50]:
            detail = f" — {s.detail}" if s.detail else ""
            print("  " + one_line(f"{name}:{s.rel_path}: {s.reason}{detail}"))
        if len(skipped) > 50:
            print(f"  … and {len(skipped) - 50} more")
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    from kenning.cli.output import print_human, print_json_lines
    from kenning.search.query import parse_query

    ws = _context(args)
    if args.also_store:
        from kenning.workspace import Workspace
        from kenning.workspace.teamstore import chosen_store

        ws.also(Workspace(chosen_store(args.also_store), model=args.model))
    text = " ".join(args.query)
    # A query without words (`tag:meeting`) lists documents by date: no model to load for it.
    searcher = ws.searcher(lazy_model=args.mode != "lexical" and not parse_query(text).is_empty)
    searcher.prepare(text, args.mode)
    result = searcher.search(text, args.mode, limit=args.limit, fusion=args.fusion)
    loaded = searcher.model_load_seconds
    if loaded is not None and loaded >= MODEL_LOAD_NOTE_MIN_SECONDS:
        print(f"kenning: note: {MODEL_LOAD_NOTE.format(seconds=loaded)}", file=sys.stderr)
    if args.json or args.format:
        for note in [*result.notes, *filter(None, [result.banner()])]:  # stdout stays lines a program can parse
            print(f"kenning: note: {note}", file=sys.stderr)
    if args.json:
        print_json_lines(result, args.explain, result.mode)
    elif args.format:
        print_editor_format(result, args.format)
    else:
        print_human(result, args.explain, color=sys.stdout.isatty())
    sys.stdout.flush()  # the answer first; remembering its query vector is housekeeping
    searcher.save_query_vectors(now=True)
    return 0


def cmd_tags(args: argparse.Namespace) -> int:
    counts = _context(args).tag_counts()
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    if not ordered and not args.names:
        print("No tags yet: front-matter `tags:` and inline #tags in Markdown notes are listed here.")
    for tag, count in ordered:
        if args.names:
            print(printable(f"tag:{tag}" if args.as_filter else tag))
        else:
            print(printable(f"{count:>6}  {tag}"))
    return 0


def cmd_links(args: argparse.Namespace) -> int:
    import json

    from kenning.cli.output import print_note_links, print_unresolved
    from kenning.workspace import answers

    ws = _context(args)
    if args.unresolved == bool(args.path):
        raise KenningError("Give a note's path (`kenning links PATH`) or --unresolved, not both.")
    if args.unresolved:
        found = ws.unresolved_links(args.source)
        if args.json:
            print(json.dumps(text_only(answers.unresolved_record(found)), ensure_ascii=False))
        else:
            print_unresolved(found)
        return 0
    links = ws.note_links(args.path, args.source, mentions=not args.no_mentions)
    if args.json:
        print(json.dumps(text_only(answers.note_links_record(links)), ensure_ascii=False))
    else:
        print_note_links(links, mentions=not args.no_mentions)
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    from kenning.cli.evaluate import run_eval

    return run_eval(args, _context(args))


def cmd_models(args: argparse.Namespace) -> int:
    from kenning.embedding import list_models

    if args.use not in (None, "list", "use") or (args.use == "list" and args.name):
        raise KenningError(
            f"`kenning models {args.use}` is not a models command: `kenning models` lists them, "
            "`kenning models use NAME` chooses one."
        )
    ctx = _context(args)
    models = list_models()
    if args.use == "use":
        if not args.name:
            raise KenningError("Say which model: `kenning models use NAME` (`kenning models` lists them).")
        ctx.update_settings(embedding_model=args.name)
        chosen = ctx.stored_settings().embedding_model
        print(f"Model set to {chosen}; run `kenning index` to embed with it.")
        return 0
    current = ctx.model_name
    for info in models:
        mark = "*" if info.name == current else " "
        print(f"{mark} {info.name:<45} dim {info.dim:<5} {info.status}")
    return 0


def cmd_rebuild(args: argparse.Namespace) -> int:
    from kenning.workspace.rebuild import rebuild_store

    ws = _context(args)
    if ws.team_target is not None:
        raise KenningError(
            f"`kenning rebuild` moves a store file aside; the team store {ws.location} is the server's: "
            "its owner backs it up and restores it with PostgreSQL's own tools."
        )
    result = rebuild_store(Path(ws.store_path))
    if result.aside is not None:
        print(f"Moved the old store aside: {result.aside}")
    if not result.backup_found:
        print("No sources backup was found: add your sources again with `kenning sources add`.")
    for failure in result.failed:
        print("  " + one_line(f"could not re-add {failure}"))
    if result.added:
        noun = "source" if len(result.added) == 1 else "sources"
        print(f"Re-added {len(result.added)} {noun}. Run `kenning index` to index them again.")
    return 1 if result.failed else 0


def cmd_settings(args: argparse.Namespace) -> int:
    ws = _context(args)
    action = getattr(args, "settings_command", None) or "list"
    if action == "set":
        value = settings_def.parse_text(settings_def.validate_name(args.name), " ".join(args.value))
        ws.update_settings(**{args.name: value})
    elif action == "reset":
        ws.reset_settings(*(settings_def.validate_name(n) for n in args.names or settings_def.FIELDS))
    _print_settings(ws)
    return 0


def _print_settings(ws: Workspace) -> None:
    effective, stored, fixed = ws.settings, ws.stored_settings(), ws.fixed_settings()
    defaults = settings_def.Settings()
    for name in settings_def.FIELDS:
        value = getattr(effective, name)
        if name in fixed:
            origin = f"from {fixed[name]}"
        elif getattr(stored, name) != getattr(defaults, name):
            origin = "set"
        else:
            origin = "default"
        print(f"{name:<16} {settings_def.format_value(name, value):<40} ({origin})")


def cmd_completion(args: argparse.Namespace) -> int:
    from kenning.cli.completion import completion_script
    from kenning.cli.main import build_parser

    print(completion_script(build_parser(), args.shell))
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    if args.http and not args.print_config:
        from kenning.cli.serving import run_service, store_path_of

        # Served by a service in this process: its store, model and watcher, and its socket
        # for the CLI and stdio bridges too.  It runs until stopped (its clients come and go).
        return run_service(store_path_of(args), idle_minutes=0, watch=True, http=args.http, model=args.model)
    from kenning.cli.output import hit_dict
    from kenning.mcpserver.entry import main

    return main(args, _context(args), hit_dict)


def cmd_store(args: argparse.Namespace) -> int:
    """`kenning store upgrade`: opening a store applies its pending migrations (a team store
    needs a role allowed to: its owner); say what the schema is now."""
    ws = _context(args)
    ws.open()  # opening it is the upgrade
    print(f"The store {ws.location} is up to date.")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from kenning.cli.serving import cmd_serve as serve

    return serve(args)


HANDLERS = {
    "gui": cmd_gui,
    "sources": cmd_sources,
    "index": cmd_index,
    "status": cmd_status,
    "search": cmd_search,
    "eval": cmd_eval,
    "links": cmd_links,
    "tags": cmd_tags,
    "models": cmd_models,
    "rebuild": cmd_rebuild,
    "store": cmd_store,
    "settings": cmd_settings,
    "mcp": cmd_mcp,
    "serve": cmd_serve,
    "completion": cmd_completion,
}
