"""Readers and writers of a team store, with exactly the GRANTs the README gives (#23 item 4)."""

from __future__ import annotations

import re
from pathlib import Path

import psycopg
import pytest

from kenning.core.errors import StoreError
from kenning.core.filters import ChunkFilter
from kenning.core.types import ChunkDraft, Document
from kenning.storage.postgres import documents, lexical, open_pg_store, records, vectors
from kenning.storage.postgres.connection import pg_failure_kind
from kenning.workspace.messages import user_message
from pgtesting import note_document

README = Path(__file__).parents[2] / "README.md"


def readme_grants() -> str:
    """The SQL block of the README's "Team store" section that follows **Roles.**."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Team store") :]
    roles = section[section.index("**Roles.**") :]
    return re.search(r"```sql\n(.*?)```", roles, re.S).group(1)


def _runbook(source_id: int) -> Document:
    return note_document(source_id, "runbook.md", title="Runbook")


@pytest.fixture
def team(pg_server, pg_database):
    """A migrated team store with the README's roles, a writer alice and a reader bob."""
    owner = open_pg_store(pg_server.url(pg_database))
    owner.close()
    # Roles are the server's, not one database's: the session's server may have them already.
    for statement in filter(None, (part.strip() for part in readme_grants().split(";"))):
        made = re.match(r"CREATE ROLE (\w+)", statement)
        if made and pg_server.admin("SELECT 1 FROM pg_roles WHERE rolname = %s", (made.group(1),)):
            continue
        pg_server.admin(statement, database=pg_database)
    for user, group in (("alice", "kenning_writers"), ("bob", "kenning_readers")):
        exists = pg_server.admin("SELECT 1 FROM pg_roles WHERE rolname = %s", (user,))
        if not exists:
            pg_server.admin(f"CREATE ROLE {user} LOGIN PASSWORD 'secret-{user}'")
        pg_server.admin(f"GRANT {group} TO {user}")
    return {
        "writer": pg_server.url(pg_database, user="alice", password="secret-alice"),
        "reader": pg_server.url(pg_database, user="bob", password="secret-bob"),
    }


def test_a_writer_indexes_and_a_reader_searches(team):
    writer = open_pg_store(team["writer"])
    source = records.insert_source(writer, kind="folder", root="/srv/runbooks", name="runbooks")
    drafts = [ChunkDraft(0, "Failover", "prose", "How to fail over the primary database", 1, 2)]
    documents.replace_document(writer, _runbook(source.id), drafts, {}, {0: "s0"})
    writer.close()
    reader = open_pg_store(team["reader"])
    found = lexical.ranked(reader, [reader.words.tokens("failover"), reader.words.tokens("primary")], (3.0, 1.0), 10)
    assert [r.chunk_id for r in found]
    assert records.list_sources(reader)[0].name == "runbooks"
    reader.close()


def test_the_reader_cannot_change_anything(team):
    writer = open_pg_store(team["writer"])
    source = records.insert_source(writer, kind="folder", root="/srv/runbooks", name="runbooks")
    drafts = [ChunkDraft(0, "Failover", "prose", "How to fail over", 1, 2)]
    doc_id = documents.replace_document(writer, _runbook(source.id), drafts, {}, {0: "s0"})
    writer.close()
    reader = open_pg_store(team["reader"])
    before = reader.version()
    attempts = {
        "add a source": lambda: records.insert_source(reader, kind="folder", root="/x", name="x"),
        "remove a source": lambda: records.delete_source(reader, source.id),
        "disable a source": lambda: records.set_enabled(reader, source.id, False),
        "write a document": lambda: documents.replace_document(reader, _runbook(source.id), drafts, {}, {0: "s1"}),
        "delete a document": lambda: documents.delete_documents(reader, [doc_id]),
        "change a setting": lambda: records.set_setting(reader, "fusion", "rrf"),
        "set the model": lambda: vectors.prepare(reader, "model|4|1", 4),
        "write git state": lambda: documents.replace_git_paths(reader, source.id, {"a.md": 1.0}),
        "record skipped files": lambda: documents.replace_skipped(reader, source.id, []),
        "raw SQL": lambda: reader.execute("TRUNCATE chunks"),
        "create a table": lambda: reader.execute("CREATE TABLE kenning.mine (x int)"),
        "drop the vector index": lambda: reader.execute("SELECT make_vector_index(8, 4)"),
    }
    for what, attempt in attempts.items():
        with pytest.raises(psycopg.Error) as refused:
            attempt()
        assert pg_failure_kind(refused.value) == "permission", what
    assert reader.version() == before
    assert [s.enabled for s in records.list_sources(reader)] == [True]
    assert records.count_chunks(reader) == 1
    reader.close()


def test_a_reader_cannot_set_the_store_up(pg_server, pg_database):
    """A database without Kenning's schema, reached by a role that may not create it."""
    if not pg_server.admin("SELECT 1 FROM pg_roles WHERE rolname = 'carol'"):
        pg_server.admin("CREATE ROLE carol LOGIN PASSWORD 'secret-carol'")
    pg_server.admin(f'REVOKE CREATE ON DATABASE "{pg_database}" FROM PUBLIC')
    with pytest.raises(StoreError) as refused:
        open_pg_store(pg_server.url(pg_database, user="carol", password="secret-carol"))
    # storage says what happened; the workspace's message says what to do
    assert getattr(refused.value, "kind", None) == "not_set_up"
    assert "store upgrade" in user_message(refused.value)
    assert "secret-carol" not in user_message(refused.value)


def test_searching_runs_in_a_read_only_transaction(team, pg_server, pg_database):
    """What a read replica allows: every read path works with default_transaction_read_only."""
    writer = open_pg_store(team["writer"])
    source = records.insert_source(writer, kind="folder", root="/srv/runbooks", name="runbooks")
    drafts = [ChunkDraft(0, "Failover", "prose", "How to fail over the primary", 1, 2)]
    documents.replace_document(writer, _runbook(source.id), drafts, {}, {0: "s0"})
    writer.close()
    pg_server.admin("ALTER ROLE bob SET default_transaction_read_only = on")
    try:
        reader = open_pg_store(team["reader"])
        chunk_filter = ChunkFilter(sources=("runbooks",), phrases=(("fail", "over"),))
        assert lexical.ranked(reader, [("failov",), ("primari",)], (3.0, 1.0), 10, chunk_filter)
        assert lexical.ranked_substrings(reader, ["rimar"], (3.0, 1.0), 10)
        assert vectors.nearest(reader, "none", __import__("numpy").ones(4, "float32"), chunk_filter, 5) == []
        assert lexical.vocabulary(reader)
        reader.close()
    finally:
        pg_server.admin("ALTER ROLE bob RESET default_transaction_read_only")


def _everything(pg_server, pg_database) -> list:
    """Every row of every Kenning table (what a reader must leave as it was)."""
    tables = [
        r[0]
        for r in pg_server.admin(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'kenning' ORDER BY tablename", database=pg_database
        )
    ]
    return [
        (
            t,
            pg_server.admin(
                f"SELECT md5(string_agg(x::text, '|' ORDER BY x::text)) FROM kenning.{t} x", database=pg_database
            ),
        )
        for t in tables
    ]


def test_a_reader_searches_from_the_command_line_and_changes_nothing(tmp_path, team, pg_server, pg_database):
    """`kenning --store <reader>` as a user runs it: search works (and writes nothing, its
    remembered query vectors stay on the user's machine); every writing command is
    refused with what to do, and the store is exactly as it was."""
    from kenning_testing import write_files

    from .test_pg_cli import _kenning

    home = tmp_path / "home"
    runbooks = write_files(tmp_path / "runbooks", {"failover.md": "# Database failover\n\nPromote the replica.\n"})
    other = write_files(tmp_path / "other", {"mine.md": "# Mine\n\nA note of my own.\n"})
    assert (
        _kenning(home, "--store", team["writer"], "sources", "add", str(runbooks), "--name", "runbooks").returncode == 0
    )
    assert _kenning(home, "--store", team["writer"], "index").returncode == 0
    before = _everything(pg_server, pg_database)
    found = _kenning(home, "--store", team["reader"], "search", "replica failover", "--explain")
    assert found.returncode == 0, found.stderr
    assert "runbooks:failover.md" in found.stdout
    (runbooks / "new.md").write_text("# New\n\nA runbook written since.\n", encoding="utf-8")
    for argv in (
        ("sources", "add", str(other), "--name", "mine"),
        ("index",),
        ("index", "runbooks"),
        ("sources", "disable", "runbooks"),
        ("sources", "remove", "runbooks"),
    ):
        refused = _kenning(home, "--store", team["reader"], *argv)
        assert refused.returncode != 0, argv
        assert "This role may not do that in the team store bob@" in refused.stderr, (argv, refused.stderr)
        assert "secret-bob" not in refused.stderr + refused.stdout
    assert _everything(pg_server, pg_database) == before
