"""Phase 2 killed with SIGKILL mid-way resumes with nothing lost or duplicated."""

import os
import signal
import subprocess
import sys
import textwrap

from kenning.ingest.sources import add_source
from kenning.storage import open_store
from kenning.storage import vectors as vectors_repo
from kenning_testing import CountingEmbedder, reindex, write_files

WORKER = textwrap.dedent(
    """
    import sys, time
    from kenning.embedding import FakeEmbedder
    from kenning.ingest.indexer import Indexer
    from kenning.storage import open_store

    class SlowFake(FakeEmbedder):
        def embed_batch(self, texts):
            time.sleep(0.05)
            print("batch", flush=True)
            return super().embed_batch(texts)

    store = open_store(sys.argv[1])
    Indexer(store, SlowFake).run()
    print("finished", flush=True)
    """
)


def _start_worker(tmp_path, db):
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    return subprocess.Popen([sys.executable, str(script), str(db)], stdout=subprocess.PIPE, text=True)


def _kill_after_batches(proc, batches: int) -> None:
    seen = 0
    while seen < batches:
        line = proc.stdout.readline()
        assert line, "worker ended before it could be killed"
        assert line.strip() != "finished"
        seen += line.strip() == "batch"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


def test_sigkill_during_embedding_then_resume(tmp_path):
    notes = write_files(
        tmp_path / "notes",
        {f"n{i:03}.md": f"# Note {i}\n\nbody {i} words\n\n## Part two\n\nmore {i}\n" for i in range(150)},
    )
    db = tmp_path / "k.db"
    store = open_store(db)
    add_source(store, notes)
    store.close()

    proc = _start_worker(tmp_path, db)
    _kill_after_batches(proc, 5)
    assert proc.returncode == -signal.SIGKILL

    store = open_store(db)
    assert store.scalar("PRAGMA integrity_check") == "ok"
    chunks = store.scalar("SELECT count(*) FROM chunks")
    pending = vectors_repo.count_pending(store)
    assert 0 < pending < chunks, "the kill should land mid-embedding"
    embedder = CountingEmbedder()
    run = reindex(store, embedder)
    # The chunks left, then each two-chunk note's opening once (ingest.embedtext.opening_input).
    assert run.embedding.embedded <= pending, "work done before the kill was redone"
    assert len(embedder.embedded) == run.embedding.embedded + run.embedding.openings
    assert vectors_repo.count_pending(store) == 0
    assert store.scalar("SELECT count(*) FROM vector_codes") == chunks
    assert (
        store.scalar(
            "SELECT count(*) FROM chunks c WHERE NOT EXISTS (SELECT 1 FROM vector_codes v WHERE v.chunk_id = c.id)"
        )
        == 0
    )
    store.close()
