"""One function per command; each returns an exit code."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from kenning.cli.context import MODEL_SETTING, Context
from kenning.cli.output import print_human, print_json_lines, print_report
from kenning.cli.terminal import TerminalProgress
from kenning.core.errors import KenningError
from kenning.core.progress import CancelToken
from kenning.ingest.indexer import Indexer
from kenning.ingest.sources import add_source, remove_source
from kenning.storage import sources as sources_repo
from kenning.storage import stats as stats_repo
from kenning.storage import vectors as vectors_repo
from kenning.storage.documents import skipped_files
from kenning.storage.settings import set_setting


def _context(args) -> Context:
    return Context(Path(args.store) if args.store else None, args.model)


def cmd_gui(args) -> int:
    if args.open_gui is None:
        print("kenning: no desktop app from this entry point; run `kenning` or `kenning-gui`.", file=sys.stderr)
        return 2
    return args.open_gui(Path(args.store) if args.store else None)


def cmd_sources(args) -> int:
    ctx = _context(args)
    store = ctx.store
    action = args.sources_command
    if action == "add":
        source = add_source(
            store,
            args.path,
            git=args.git,
            name=args.name,
            include=tuple(args.include),
            exclude=tuple(args.exclude),
        )
        print(f"Added {source.kind} source {source.name!r}: {source.root}")
        print("Run `kenning index` to index it.")
    elif action == "list":
        _list_sources(store)
    elif action == "remove":
        source = remove_source(store, args.name)
        print(f"Removed {source.name!r} and everything indexed from it.")
    elif action in ("enable", "disable"):
        source = sources_repo.get_source(store, args.name)
        sources_repo.set_enabled(store, source.id, action == "enable")
        print(f"{source.name}: {action}d")
    elif action == "globs":
        source = sources_repo.get_source(store, args.name)
        sources_repo.set_globs(store, source.id, tuple(args.include), tuple(args.exclude))
        print(f"{source.name}: include {args.include or ['*']}, exclude {args.exclude or []}")
    return 0


def _list_sources(store) -> None:
    stats = stats_repo.source_stats(store)
    sources = sources_repo.list_sources(store)
    if not sources:
        print("No sources yet. Add one with `kenning sources add PATH` (or --git for a repository).")
    for s in sources:
        st = stats.get(s.id)
        state = "" if s.enabled else " (disabled)"
        print(f"{s.name}{state}  [{s.kind}]  {s.root}")
        if st:
            print(
                f"    {st.documents} documents, {st.chunks} chunks, {st.pending_vectors} vectors pending, {st.skipped} skipped"
            )


def cmd_index(args) -> int:
    ctx = _context(args)
    store = ctx.store
    chosen = [sources_repo.get_source(store, args.name)] if args.name else None
    if chosen is None and not sources_repo.list_sources(store):
        print("No sources to index. Add one with `kenning sources add PATH`.")
        return 0
    progress = TerminalProgress()
    cancel = CancelToken()
    factory = None if args.no_embed else (lambda: ctx.embedder)
    indexer = Indexer(store, factory)
    try:
        run = indexer.run(chosen, embed=not args.no_embed, on_progress=progress, cancel=cancel)
    except KeyboardInterrupt:
        cancel.cancel()
        progress.finish()
        raise
    progress.finish()
    for report in run.reports:
        print_report(report)
    if run.embed_stats:
        s = run.embed_stats
        print(f"embeddings: {int(s['embedded'])} embedded, {int(s['reused'])} reused from cache in {s['seconds']:.1f}s")
    return 1 if any(r.errors for r in run.reports) else 0


def cmd_status(args) -> int:
    ctx = _context(args)
    store = ctx.store
    print(f"store: {store.path} ({stats_repo.store_size_bytes(store) / 1e6:.1f} MB)")
    if store.vec_available:
        print("vector index: sqlite-vec")
    else:
        print(
            f"vector index: unavailable — {store.vec_error}; lexical search works, semantic search scans at most 5000 rows"
        )
    print(f"model: {ctx.model_name}")
    total_docs = total_chunks = 0
    _list_sources(store)
    for st in stats_repo.source_stats(store).values():
        total_docs += st.documents
        total_chunks += st.chunks
    print(f"total: {total_docs} documents, {total_chunks} chunks, {vectors_repo.count_pending(store)} vectors pending")
    skipped = skipped_files(store)
    if skipped:
        print(f"skipped files ({len(skipped)}):")
        for name, s in skipped[:50]:
            detail = f" — {s.detail}" if s.detail else ""
            print(f"  {name}:{s.rel_path}: {s.reason}{detail}")
        if len(skipped) > 50:
            print(f"  … and {len(skipped) - 50} more")
    return 0


def cmd_search(args) -> int:
    from kenning.search.engine import SearchEngine, SearchOptions

    ctx = _context(args)
    store = ctx.store
    embedder = None
    if args.mode != "lexical":
        if vectors_repo.has_vectors(store, ctx.query_embedder.fingerprint):
            embedder = ctx.query_embedder
        elif args.mode == "vector":
            raise KenningError("No vectors for this model yet: run `kenning index` first.")
    engine = SearchEngine(store, embedder)
    mode = args.mode if embedder is not None else "lexical"
    result = engine.search(" ".join(args.query), SearchOptions(limit=max(1, args.limit), mode=mode, fusion=args.fusion))
    if args.json:
        print_json_lines(result, args.explain)
    else:
        print_human(result, args.explain, color=sys.stdout.isatty())
    return 0


def cmd_eval(args) -> int:
    from kenning.cli.evaluate import run_eval

    return run_eval(args, _context(args))


def cmd_models(args) -> int:
    from kenning.embedding import list_models

    ctx = _context(args)
    if args.use == "use" and args.name:
        set_setting(ctx.store, MODEL_SETTING, args.name)
        print(f"Model set to {args.name}; run `kenning index` to embed with it.")
        return 0
    current = ctx.model_name
    for info in list_models():
        mark = "*" if info.name == current else " "
        print(f"{mark} {info.name:<45} dim {info.dim:<5} {info.status}")
    return 0


def cmd_rebuild(args) -> int:
    from kenning.storage import open_store

    ctx = _context(args)
    path = ctx.store_path
    saved = sources_repo.read_backup(path)
    if path.exists():
        aside = path.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
        os.replace(path, aside)
        for suffix in ("-wal", "-shm"):
            if Path(str(path) + suffix).exists():
                os.replace(str(path) + suffix, str(aside) + suffix)
        print(f"Moved the old store aside: {aside}")
    store = open_store(path)
    for entry in saved:
        try:
            add_source(
                store,
                entry["root"],
                git=entry["kind"] == "git",
                name=entry["name"],
                include=tuple(entry.get("include", ())),
                exclude=tuple(entry.get("exclude", ())),
            )
        except KenningError as exc:
            print(f"  could not re-add {entry.get('name')}: {exc}")
    print(f"Re-added {len(saved)} sources. Run `kenning index` to index them again.")
    store.close()
    return 0


HANDLERS = {
    "gui": cmd_gui,
    "sources": cmd_sources,
    "index": cmd_index,
    "status": cmd_status,
    "search": cmd_search,
    "eval": cmd_eval,
    "models": cmd_models,
    "rebuild": cmd_rebuild,
}
