"""Developer notes used to populate the store for the README screenshots."""

NOTES = {
    "databases/sqlite-busy.md": """
---
tags: [sqlite, concurrency]
---
# SQLite: database is locked

## Why it happens
In WAL mode readers never block the writer, but two writers still serialise. A second
connection that starts a deferred transaction, reads, and then tries to write gets
SQLITE_BUSY immediately when another connection committed in between.

## Fix: BEGIN IMMEDIATE and a busy timeout
Take the write lock up front with `BEGIN IMMEDIATE`, and set a busy timeout so SQLite
itself waits and retries:

```python
conn.execute("PRAGMA busy_timeout = 15000")
with conn:  # BEGIN IMMEDIATE ... COMMIT
    conn.execute("INSERT INTO jobs(name) VALUES (?)", (name,))
```

## Retry with backoff at the application level
When the timeout is not enough (long checkpoints, network filesystems), retry the whole
transaction with exponential backoff and jitter; never retry a single statement inside it.
""",
    "databases/wal-checkpoints.md": """
---
tags: [sqlite, ops]
---
# WAL checkpoints

Write-ahead logging appends pages to the -wal file; a checkpoint copies them back into the
database. `wal_autocheckpoint` (default 1000 pages) runs a PASSIVE checkpoint on commit.
Long-running readers stop the checkpoint from resetting the WAL, so it grows without bound.
""",
    "python/retry-backoff.md": """
---
tags: [python, reliability]
---
# Retry with exponential backoff

Full jitter works best under contention: sleep a random time between 0 and
`base * 2 ** attempt`, capped. Retrying without jitter makes all clients retry in lockstep.

```python
def retry(fn, attempts=6, base=0.05, cap=2.0):
    for attempt in range(attempts):
        try:
            return fn()
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == attempts - 1:
                raise
            time.sleep(random.uniform(0, min(cap, base * 2 ** attempt)))
```
""",
    "python/asyncio-pitfalls.md": """
---
tags: [python, concurrency]
---
# asyncio pitfalls

- Blocking calls inside a coroutine freeze the whole event loop: use `asyncio.to_thread`.
- `asyncio.gather` does not cancel siblings when one fails unless you use a TaskGroup.
- Keep a reference to tasks created with `create_task`, or they may be garbage collected.
""",
    "python/qt-threads.md": """
---
tags: [python, qt, concurrency]
---
# Qt and Python threads

QRunnable plus a QObject holding signals is the simplest worker. Signals emitted from the
worker thread are delivered to the UI thread through queued connections. Every Qt call can
release the GIL, so a CPU-bound Python thread makes the UI wait: move heavy work to a process.
""",
    "ops/postgres-vacuum.md": """
---
tags: [ops, postgres]
---
# Postgres autovacuum notes

Autovacuum falls behind on tables with heavy updates; lower `autovacuum_vacuum_scale_factor`
per table instead of globally. Watch `n_dead_tup` in pg_stat_user_tables.
""",
    "ops/incident-2024-03-queue.md": """
---
tags: [ops, incident, reliability]
---
# Incident: job queue stalled (2024-03)

The worker pool retried failed jobs immediately, saturating the database with lock waits.
Fix: retry with backoff and a dead-letter queue after five attempts.
""",
    "ideas/search-ranking.md": """
# TODO: ranking ideas

IDEA: boost notes linked from recently changed files in the repository.
Consider reciprocal rank fusion of keyword and semantic lists before any reranking.
""",
    "rust/ownership.md": """
# Rust ownership and borrowing

A value has one owner; borrows are either shared (`&T`) or exclusive (`&mut T`).
The borrow checker rejects references that outlive their owner.
""",
    "tools/git-bisect.md": """
# git bisect in five commands

`git bisect start`, `git bisect bad`, `git bisect good v1.2`, then test and mark each step;
`git bisect run ./test.sh` automates it. Finish with `git bisect reset`.
""",
}
