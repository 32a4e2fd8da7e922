"""SIGKILL at random points of a real index run loses nothing.

One scenario covers every phase: a store indexed earlier, then files changed, added
and deleted, a source to remove and a new source never indexed.  The work is
"remove source `old`, then index everything (phase 1 + phase 2)".

A forked child does the work and is killed with a real SIGKILL, either

* at the N-th call made by Kenning code (a profile hook counts calls, both Python
  functions and C calls such as apsw's execute; N is drawn at random per phase from
  a dry run's call list), so kills land in store opening, source removal, the walk,
  phase 1 and phase 2 in known proportions; or
* by the parent after a random delay (lands anywhere, including inside SQLite).

After each kill the store must open and pass every health check (integrity_check,
FTS integrity-check, foreign keys, vectors <-> chunks), and after the next
(uninterrupted) run it must hold exactly what a clean run produced: sources,
documents, chunks, refs, skipped files, embedding cache and vectors, compared by
content (ids may differ).

KENNING_LONG_TESTS=1 multiplies the kill points by ten.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import sys
import time
from pathlib import Path

import pytest

from kenning.core.errors import SourceError
from kenning.embedding import FakeEmbedder
from kenning.ingest.indexer import Indexer
from kenning.ingest.sources import add_source, remove_source
from kenning.search.engine import SearchEngine, SearchOptions
from kenning.storage import open_store
from reliability.helpers import (
    assert_healthy,
    backup_sources,
    code,
    count,
    diff_snapshots,
    health_problems,
    note,
    pick,
    snapshot,
    write_files,
)

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")

PHASES = ("open", "removal", "walk", "phase1", "phase2")
KILLS_PER_PHASE = pick(5, 60)
TIMED_KILLS = pick(5, 60)
SEED = int(os.environ.get("KENNING_CRASH_SEED", "0")) or random.randrange(1, 10**6)


# -- the scenario --------------------------------------------------------------------


def _build_tree(root: Path) -> None:
    keep = {f"keep/n{i:02}.md": note(i) for i in range(18)}
    keep.update({f"keep/src/m{i}.py": code(i) for i in range(6)})
    keep["keep/bin.txt"] = b"\x00\x01binary" * 40
    keep["keep/plain.txt"] = "plain text file\n\nsecond paragraph mentions keep/src/m1.py\n"
    write_files(root, keep)
    write_files(root, {f"old/o{i}.md": note(100 + i) for i in range(8)})
    write_files(root, {f"new/x{i:02}.md": note(200 + i, words=120) for i in range(48)})


def _mutate(root: Path) -> None:
    for i in range(4):
        (root / f"keep/n{i:02}.md").write_text(note(i) + f"\n\nedited {i}\n")
    for i in range(4, 7):
        (root / f"keep/n{i:02}.md").unlink()
    write_files(root, {f"keep/added{i}.md": note(300 + i) for i in range(4)})
    (root / "keep/src/m0.py").write_bytes(b"\xff\xfe not utf-8 any more \x80")


def _work(db: Path, on_stage=lambda stage: None) -> None:
    """What the killed process does, and what the recovery run repeats."""
    on_stage("open")
    store = open_store(db)
    try:
        on_stage("removal")
        try:
            remove_source(store, "old")
        except SourceError:
            pass  # removed by the run that was killed
        on_stage("index")
        Indexer(store, FakeEmbedder).run()
    finally:
        store.close()


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    base = tmp_path_factory.mktemp("crash")
    tree = base / "tree"
    _build_tree(tree)
    db = base / "initial" / "k.db"
    store = open_store(db)
    for name in ("keep", "old"):
        add_source(store, tree / name)
    Indexer(store, FakeEmbedder).run()
    add_source(store, tree / "new")
    store.close()
    _mutate(tree)
    clean_db = _copy_store(db, base / "clean")
    started = time.monotonic()
    _work(clean_db)
    clean_seconds = time.monotonic() - started
    store = open_store(clean_db)
    clean = snapshot(store)
    assert not health_problems(store)
    store.close()
    assert clean["pending"] == 0 and clean["vector_rows"] == len(clean["chunks"]) > 80
    assert {r[0] for r in clean["sources"]} == {"keep", "new"}
    return {"base": base, "db": db, "clean": clean, "clean_seconds": clean_seconds}


def _copy_store(db: Path, target_dir: Path) -> Path:
    target_dir.mkdir(parents=True, exist_ok=True)
    for suffix in ("", ".sources.json"):
        src = Path(str(db) + suffix)
        if src.exists():
            shutil.copy2(src, target_dir / (db.name + suffix))
    return target_dir / db.name


# -- the child -----------------------------------------------------------------------


def _phase(stage: str, filename: str) -> str:
    if stage != "index":
        return stage
    if filename.endswith("walker.py"):
        return "walk"
    if "embedphase" in filename or "vectors.py" in filename or "/embedding/" in filename:
        return "phase2"
    return "phase1"


def _run_child(db: Path, out: Path, kill_at: int | None) -> int:
    """Fork; the child does the work, profiling calls; returns the child's pid.

    kill_at None: dry run, the child writes the phase of every call to out.
    Otherwise the child SIGKILLs itself at that call, after writing its phase.
    """
    pid = os.fork()
    if pid:
        return pid
    try:
        stage = ["open"]
        phases: list[str] = []
        calls = [0]

        def on_stage(name):
            stage[0] = name

        def profile(frame, event, arg):
            if event not in ("call", "c_call"):
                return
            filename = frame.f_code.co_filename
            if "kenning" not in filename or "/tests/" in filename:
                return
            calls[0] += 1
            if kill_at is None:
                phases.append(_phase(stage[0], filename))
            elif calls[0] == kill_at:
                out.write_text(_phase(stage[0], filename))
                os.kill(os.getpid(), signal.SIGKILL)

        sys.setprofile(profile)
        _work(db, on_stage)
        sys.setprofile(None)
        if kill_at is None:
            out.write_text(json.dumps(phases))
        else:
            out.write_text("finished")
        os._exit(0)
    except BaseException:  # never return into pytest from the child
        import traceback

        traceback.print_exc()
        os._exit(3)


def _wait(pid: int, timeout: float = 120) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        time.sleep(0.005)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    raise AssertionError("child did not finish")


def _kill_plan(scenario) -> list[tuple[str, int]]:
    work = scenario["base"] / "dry"
    db = _copy_store(scenario["db"], work)
    out = work / "phases.json"
    status = _wait(_run_child(db, out, None))
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    phases = json.loads(out.read_text())
    by_phase: dict[str, list[int]] = {p: [] for p in PHASES}
    for index, phase in enumerate(phases, start=1):
        by_phase[phase].append(index)
    rng = random.Random(SEED)
    plan = []
    for phase in PHASES:
        calls = by_phase[phase]
        assert calls, f"the dry run never reached {phase}"
        plan += [(phase, rng.choice(calls)) for _ in range(KILLS_PER_PHASE)]
    return plan


# -- after a kill --------------------------------------------------------------------


def _check_after_kill(db: Path, clean: dict, label: str) -> None:
    store = open_store(db)
    try:
        problems = health_problems(store)
        assert not problems, f"{label}: store unhealthy right after the kill: {problems}"
        # Still searchable as it is, before any recovery.
        SearchEngine(store).search("note details", SearchOptions(mode="lexical"))
    finally:
        store.close()
    _work(db)  # the next run
    store = open_store(db)
    try:
        assert not health_problems(store)
        differences = diff_snapshots(clean, snapshot(store))
        assert not differences, f"{label}: after the next run the store differs: {differences}"
        names = sorted(s.name for s in store.sources.list())
    finally:
        store.close()
    assert sorted(s["name"] for s in backup_sources(db)) == names or _stale_backup_known(label), (
        f"{label}: the sources backup lists the wrong sources"
    )


def _stale_backup_known(label: str) -> bool:
    # Known bug (reported): a kill between the DELETE's commit and the rewrite of
    # <store>.sources.json leaves a backup that still names the removed source.
    count("crash: stale sources backup after kill in removal")
    return "removal" in label


def test_sigkill_at_random_calls_loses_nothing(scenario):
    plan = _kill_plan(scenario)
    survived = {p: 0 for p in PHASES}
    for n, (phase, kill_at) in enumerate(plan):
        work = scenario["base"] / f"kill{n}"
        db = _copy_store(scenario["db"], work)
        marker = work / "killed-in"
        status = _wait(_run_child(db, marker, kill_at))
        if not os.WIFSIGNALED(status):
            continue  # the run took a slightly shorter path and finished first
        assert os.WTERMSIG(status) == signal.SIGKILL
        where = marker.read_text() if marker.exists() else phase
        _check_after_kill(db, scenario["clean"], f"seed {SEED}, kill #{n} at call {kill_at} in {where}")
        survived[where] = survived.get(where, 0) + 1
        shutil.rmtree(work)
    for where, n in survived.items():
        count(f"crash: kill points survived ({where})", n)
    assert sum(survived.values()) >= len(plan) * 0.8, survived
    assert all(survived[p] for p in PHASES), survived


def test_sigkill_at_random_times_loses_nothing(scenario):
    rng = random.Random(SEED + 1)
    # The child runs unprofiled; kill anywhere from just after fork to the end.
    horizon = scenario["clean_seconds"] * 1.2 + 0.05
    killed = 0
    attempts = 0
    while killed < TIMED_KILLS and attempts < TIMED_KILLS * 4:
        n = attempts
        attempts += 1
        work = scenario["base"] / f"timed{n}"
        db = _copy_store(scenario["db"], work)
        pid = os.fork()
        if pid == 0:
            try:
                _work(db)
            finally:
                os._exit(0)
        time.sleep(rng.uniform(0, horizon))
        os.kill(pid, signal.SIGKILL)
        status = _wait(pid)
        if os.WIFSIGNALED(status):
            killed += 1
        else:
            horizon *= 0.7  # this run finished before the kill (a faster child): aim earlier
        _check_after_kill(db, scenario["clean"], f"seed {SEED}, timed kill #{n}")
        shutil.rmtree(work)
    count("crash: kill points survived (random time)", killed)
    assert killed >= TIMED_KILLS // 2


def test_killed_phase2_resumes_without_redoing_work(scenario, tmp_path):
    """Beyond "same result": vectors committed before the kill are not embedded again."""
    db = _copy_store(scenario["db"], tmp_path / "resume")
    store = open_store(db)
    Indexer(store, FakeEmbedder).run(embed=False)
    pending = store.vectors.count_pending()
    store.close()
    pid = os.fork()
    if pid == 0:
        try:

            class Dying(FakeEmbedder):
                batches = 0

                def embed_batch(self, texts):
                    Dying.batches += 1
                    if Dying.batches == 4:
                        os.kill(os.getpid(), signal.SIGKILL)
                    return super().embed_batch(texts)

            s = open_store(db)
            Indexer(s, Dying).run()
        finally:
            os._exit(0)
    assert os.WIFSIGNALED(_wait(pid))
    assert_healthy(db)

    class Counting(FakeEmbedder):
        texts: list[str] = []

        def embed_batch(self, texts):
            Counting.texts.extend(texts)
            return super().embed_batch(texts)

    store = open_store(db)
    still = store.vectors.count_pending()
    assert 0 < still <= pending - 3 * 16
    run = Indexer(store, Counting).run()
    assert run.embedding.embedded <= still  # the chunks' vectors; then the documents' openings, once
    assert len(Counting.texts) == run.embedding.embedded + run.embedding.openings
    assert store.vectors.count_pending() == 0
    store.close()
