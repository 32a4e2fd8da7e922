"""#25 item 7: a folder inside a source (or holding one) is never indexed twice.

One rule (workspace/sources.py) for the CLI and the app: a folder whose files a source
indexes already is refused, with words saying which source has them and what to do
instead; a folder excluded by that source's globs (or left out of a repository) is fine.
"""

from __future__ import annotations

import subprocess

import pytest

from kenning.cli.main import main as cli
from kenning.core.errors import SourceError
from kenning.workspace import Workspace
from kenning_testing import write_files


@pytest.fixture
def ws(tmp_path):
    w = Workspace(tmp_path / "k.db", environ={})
    yield w
    w.close()


@pytest.fixture
def vault(tmp_path):
    root = tmp_path / "vault"
    write_files(root, {"a.md": "# A\n\nalpha\n", "projects/b.md": "# B\n\nbeta\n", "projects/deep/c.md": "# C\n"})
    return root


def test_a_folder_inside_a_source_is_refused_naming_the_source(ws, vault):
    ws.add_folder(vault, name="vault")
    with pytest.raises(SourceError) as caught:
        ws.add_folder(vault / "projects")
    message = str(caught.value)
    assert "inside the source “vault”" in message and "indexed already" in message
    assert "source:vault path:projects/" in message, "it says how to search just that folder"
    assert caught.value.existing.name == "vault" and caught.value.relation == "inside"
    assert [s.name for s in ws.list_sources()] == ["vault"]
    with pytest.raises(SourceError):
        ws.add_folder(vault / "projects" / "deep")


def test_a_folder_holding_a_source_is_refused_and_told_how(ws, vault):
    ws.add_folder(vault / "projects", name="projects")
    with pytest.raises(SourceError) as caught:
        ws.add_folder(vault)
    message = str(caught.value)
    assert "holds the source “projects”" in message and "twice" in message
    assert "--exclude projects/" in message
    assert caught.value.relation == "contains"


def test_an_excluded_folder_may_be_a_source_of_its_own(ws, vault):
    ws.add_folder(vault, name="vault", exclude="projects/")
    assert ws.add_folder(vault / "projects").name == "projects"
    ws.remove_source("projects")
    ws.remove_source("vault")
    ws.add_folder(vault / "projects", name="projects")
    assert ws.add_folder(vault, name="vault", exclude="projects/").name == "vault"


def test_a_sibling_with_a_common_prefix_is_no_overlap(ws, tmp_path):
    write_files(tmp_path / "notes", {"a.md": "# A\n"})
    write_files(tmp_path / "notes-old", {"b.md": "# B\n"})
    ws.add_folder(tmp_path / "notes")
    assert ws.add_folder(tmp_path / "notes-old").name == "notes-old"


def test_a_symlink_to_a_folder_inside_a_source_is_seen_through(ws, vault, tmp_path):
    ws.add_folder(vault, name="vault")
    link = tmp_path / "shortcut"
    link.symlink_to(vault / "projects")
    with pytest.raises(SourceError):
        ws.add_folder(link)


def _git(root, *args):
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def test_a_repository_inside_a_folder_source_is_refused_until_excluded(ws, vault):
    repo = vault / "projects"
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "x")
    source = ws.add_folder(vault, name="vault")
    with pytest.raises(SourceError, match="inside the source “vault”") as caught:
        ws.link_repo(repo)
    assert "`kenning sources globs vault --exclude projects/`" in str(caught.value)
    ws.set_globs(source.id, (), "projects/")
    assert ws.link_repo(repo).kind == "git"


def test_an_untracked_folder_of_a_linked_repository_may_be_added(ws, tmp_path):
    repo = tmp_path / "repo"
    write_files(repo, {"src/main.py": "print(1)\n", ".gitignore": "scratch/\n", "scratch/n.md": "# N\n"})
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "x")
    ws.link_repo(repo, name="repo")
    assert ws.add_folder(repo / "scratch").name == "scratch", "git ignores it: the repository does not index it"
    with pytest.raises(SourceError):
        ws.add_folder(repo / "src")


def test_the_cli_refuses_it_with_the_same_words(tmp_path, vault, capsys):
    store = str(tmp_path / "c.db")
    assert cli(["--store", store, "sources", "add", str(vault)]) == 0
    capsys.readouterr()
    code = cli(["--store", store, "sources", "add", str(vault / "projects")])
    err = capsys.readouterr().err
    assert code != 0 and "inside the source “vault”" in err and "source:vault path:projects/" in err
    with Workspace(tmp_path / "c.db", environ={}) as w:
        assert [s.name for s in w.list_sources()] == ["vault"]


def test_the_error_is_a_source_error(ws, vault):
    ws.add_folder(vault, name="vault")
    with pytest.raises(SourceError):
        ws.add_folder(vault / "projects")
