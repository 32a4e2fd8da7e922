"""What an assistant can make Kenning read (issue #24, items 13 and 28, and siblings).

`kenning mcp --allow-writes` offers `add_source`, and text in an indexed note can steer
an assistant: credential and system folders are refused as roots by every front end
(the MCP server, the app's workspace calls, the command line); only the command line
can override, with an explicit flag.  `read` serves what was indexed, for a mailbox's
message or a PDF too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from docfiles import email_bytes, mbox_bytes, write_pdf
from kenning.core.errors import SourceError
from kenning.workspace import Workspace
from reliability.helpers import cli, count, mcp_said, mcp_service, write_files

TOKEN = "gho_TOKENinHOSTSyml0123456789"


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A home folder with the credential folders an assistant must never get indexed."""
    home = tmp_path / "home-of-user"
    write_files(
        home,
        {
            ".ssh/id_ed25519": "-----BEGIN OPENSSH PRIVATE KEY-----\n",
            ".ssh/notes.md": f"{TOKEN}\n",
            ".config/gh/hosts.yml": f"github.com:\n  oauth_token: {TOKEN}\n",
            ".aws/credentials": f"aws_secret_access_key = {TOKEN}\n",
            "notes/ordinary.md": "# Ordinary\n\nfine to index\n",
        },
    )
    monkeypatch.setenv("HOME", str(home))
    return home


def _refused_paths(home: Path, kenning_home: Path) -> list[Path]:
    return [
        Path("/"),
        home,
        home / ".ssh",
        home / ".config",
        home / ".config" / "gh",
        home / ".aws",
        kenning_home,
        Path("/etc"),
        Path("/proc"),
    ]


def test_mcp_add_source_refuses_credential_and_system_folders(tmp_path, home, _isolated_home):
    db = tmp_path / "store" / "k.db"
    service = mcp_service(db, allow_writes=True)
    try:
        for path in _refused_paths(home, _isolated_home):
            for git in (False, True):
                with pytest.raises(SourceError, match="is not a folder Kenning indexes"):
                    service.add_source(str(path), git=git)
                count("MCP writes: private roots refused")
        assert '"notes"' in mcp_said(service.add_source(str(home / "notes")))
        service.index()
        assert TOKEN not in mcp_said(service.search("oauth_token", mode="lexical"))
    finally:
        service.close()


def test_the_cli_refuses_them_too_unless_told_explicitly(tmp_path, home, _isolated_home):
    db = tmp_path / "store" / "k.db"
    for path in _refused_paths(home, _isolated_home):
        rc, out, err = cli(db, "sources", "add", str(path))
        assert rc == 2 and "is not a folder Kenning indexes" in err and "--allow-private-folder" in err, err
        count("MCP writes: private roots refused")
    rc, out, err = cli(db, "sources", "add", str(home / ".config"), "--allow-private-folder", "--name", "cfg")
    assert rc == 0, err  # the user said so, on the command line


def test_the_apps_workspace_refuses_them(tmp_path, home):
    ws = Workspace(tmp_path / "store" / "k.db", model="fake")
    try:
        with pytest.raises(SourceError, match="credentials"):
            ws.add_folder(home / ".config")
        with pytest.raises(SourceError, match="credentials"):
            ws.add_folder(home)
    finally:
        ws.close()


def test_a_root_inside_a_git_folder_is_refused(tmp_path):
    notes = write_files(tmp_path / "repo", {".git/objects/notes.md": "inside .git\n"})
    rc, out, err = cli(tmp_path / "store" / "k.db", "sources", "add", str(notes / ".git" / "objects"))
    assert rc == 2 and ".git" in err


# -- item 28: reading a mailbox's message (and an extracted document) ---------------


def test_mcp_read_of_a_mailbox_message_serves_its_text(tmp_path):
    box = tmp_path / "mail" / "box.mbox"
    box.parent.mkdir()
    box.write_bytes(
        mbox_bytes(
            [
                email_bytes("First", "a@example.org", "the first message body"),
                email_bytes("Second", "b@example.org", "the second message talks about marmots"),
            ]
        )
    )
    write_pdf(tmp_path / "mail" / "paper.pdf", [["a page about ibexes"]])
    db = tmp_path / "store" / "k.db"
    cli(db, "sources", "add", str(box.parent), "--name", "mail")
    cli(db, "index", "--no-embed")
    service = mcp_service(db)
    try:
        answer = service.read("box.mbox#2")
        assert "marmots" in mcp_said(answer)
        assert "vanished" not in answer.get("note", "") and "could not be read" not in answer.get("note", "")
        pdf = service.read("paper.pdf")
        assert "ibexes" in mcp_said(pdf) and "binary" not in pdf.get("note", "")
        box.unlink()  # really gone now: the indexed text, with a note that says so
        gone = service.read("box.mbox#2")
        assert "marmots" in mcp_said(gone) and "could not be read" in gone["note"]
    finally:
        service.close()
