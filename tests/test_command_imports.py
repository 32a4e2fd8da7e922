"""Instant commands (issue #15): a lexical search and `kenning status` import only what they need.

Each command runs in a fresh interpreter (as the user's shell would start it) and
reports which modules it loaded; numpy, the embedding adapters, fastembed, the indexer
and GitPython cost a few hundred milliseconds together and must stay out.  Lighter
modules count too on a slow machine: the log file's rotating handler (socket, pickle)
until something is logged, an editor's launcher, and for `kenning status` the whole
search pipeline.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kenning_testing import index_folder, write_files

HEAVY = (
    "numpy",
    "fastembed",
    "onnxruntime",
    "git",
    "yaml",
    "kenning.core.wildmatch",
    "rapidfuzz",
    "kenning.embedding.fake",
    "kenning.embedding.fastembed_adapter",
    "kenning.embedding.models",
    "kenning.ingest.indexer",
    "kenning.ingest.textphase",
    "kenning.ingest.embedphase",
    "kenning.search.vector",
    "kenning.gitinfo",
    "logging.handlers",
    "subprocess",
    "kenning.ingest.extract",
    "kenning.core.progress",  # indexing's
    "concurrent.futures",  # the engine's query-embedding thread: semantic searches only
    "socket",  # the service's client: only when a service's socket exists
    "logging",  # imported on the first record kept (core.logger); these commands keep none
    "shutil",  # argparse's help formatter's, for the terminal's width (cli.main._HelpFormatter)
    "typing",  # the type checker's: annotations, aliases and Protocols under kenning.TYPE_CHECKING
)
# What each command must also leave out.
NOT_FOR = {
    "status": (
        "kenning.search.engine",
        "kenning.search.fts",
        "kenning.storage.lexical",
        "kenning.storage.filtering",
        "kenning.cli.output",
    ),
}

RUNNER = """
import json, sys
from kenning.cli.main import main
code = main(sys.argv[1:])
# A module the CLI deferred (kenning.cli.DEFERRED) and nothing used is not loaded.
loaded = [name for name, module in sys.modules.items() if type(module).__name__ != "_Deferred"]
print("MODULES " + json.dumps(sorted(loaded)), file=sys.stderr)
sys.exit(code)
"""


def _modules_loaded_by(args: list[str], home: Path, *, user_home: Path | None = None) -> tuple[set[str], str]:
    """The modules `kenning ARGS` loaded, with KENNING_HOME=home; or, given user_home,
    with no KENNING_HOME and that folder as the user's home (its XDG folders unset)."""
    env = dict(os.environ, KENNING_HOME=str(home), PYTHONPATH=os.pathsep.join(sys.path))
    if user_home is not None:
        del env["KENNING_HOME"]
        for name in ("XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
            env.pop(name, None)
        env["HOME"] = str(user_home)
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, *args], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stderr.splitlines() if x.startswith("MODULES "))
    return set(json.loads(line.removeprefix("MODULES "))), done.stdout


def _python(code: str) -> subprocess.CompletedProcess:
    """code run by a fresh interpreter that imports the Kenning under test."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)


@pytest.fixture
def indexed_store(tmp_path, store, embedder):
    notes = write_files(tmp_path / "notes", {"a.md": "# Parsing\nParse command line arguments with argparse.\n"})
    index_folder(store, notes, embedder)
    return store.path


@pytest.mark.parametrize(
    "command",
    [["search", "--mode", "lexical", "argparse"], ["status"]],
    ids=["lexical-search", "status"],
)
def test_instant_commands_leave_the_heavy_modules_unloaded(command, indexed_store, tmp_path):
    loaded, out = _modules_loaded_by(["--store", str(indexed_store), *command], tmp_path / "home")
    assert "a.md" in out or "1 documents" in out  # the command did its work
    unwanted = HEAVY + NOT_FOR.get(command[0], ())
    heavy = sorted(m for m in loaded if any(m == h or m.startswith(h + ".") for h in unwanted))
    assert heavy == []


# Issue #27 item 4: what a lexical search and `kenning status` may load in all, standard
# library included (the bare `python -c 'import sqlite3, json, argparse'` loads about 66).
# Issue #24 added three small ones to both: core.controls (one control-character rule for
# the terminal and the log), core.owndirs (private folders, for the model cache too) and
# core.privacy (the CLI's --allow-private-folder flag is named there).  Issue #28 added
# search.definitions to lexical search (a definition of the identifier a query names).
# Issue #27 (round 4): inspect, ipaddress, traceback, bz2, lzma, shlex deferred
# (kenning.cli.DEFERRED): -19 for each.  Round 5: core.records (+1 for each), which makes
# the dataclasses' methods on first use.
# Round 8: the budgets tightened to what the commands load (179/84, 149/58).
# Round 10: logging (and its string) imported on the first record kept, core.logger's
# loggers standing in until then: -1 and -3 in all, +1 of Kenning's; the CLI's help
# formatter measures the terminal without shutil (and its zlib): -2 each.
# Round 11: search.fuzzy spells out a-z instead of importing string (and _string): -2.
# Round 12: typing imported by no module on these paths (kenning.TYPE_CHECKING): -4.
# Imported where they are used: storage.substrings by the substring list (a search of
# known words has none), search.phrases by a query quoting one, search.suggest by a word
# the index lacks, search.explain by --explain, storage.query_vectors by a meaning
# search: -5 and -4 of Kenning's for a lexical search, -1 each for `status`.
MODULE_BUDGET = {"search": (165, 80), "status": (139, 58)}  # (all modules, Kenning's)


@pytest.mark.parametrize(
    "command",
    [["search", "--mode", "lexical", "argparse"], ["status"]],
    ids=["lexical-search", "status"],
)
def test_instant_commands_stay_within_their_module_budget(command, indexed_store, tmp_path):
    loaded, _ = _modules_loaded_by(["--store", str(indexed_store), *command], tmp_path / "home")
    total, ours = MODULE_BUDGET[command[0]]
    kenning = sorted(m for m in loaded if m == "kenning" or m.startswith("kenning."))
    assert len(loaded) <= total, sorted(loaded)
    assert len(kenning) <= ours, kenning


@pytest.mark.parametrize(
    "command",
    [["search", "--mode", "lexical", "argparse"], ["status"]],
    ids=["lexical-search", "status"],
)
def test_instant_commands_never_load_what_the_cli_defers(command, indexed_store, tmp_path):
    """Issue #27 item 4: `dataclasses` imports inspect (ast, dis, tokenize...) only for the
    docstring of a dataclass without one, urllib.parse imports ipaddress for one check,
    logging traceback for a traceback, shutil bz2 and lzma; the CLI defers them
    (kenning.cli.DEFERRED) and nothing on these paths uses them."""
    from kenning.cli import DEFERRED

    loaded, _ = _modules_loaded_by(["--store", str(indexed_store), *command], tmp_path / "home")
    assert not {*DEFERRED, "ast", "dis", "opcode", "linecache", "tokenize", "_bz2", "_lzma"} & loaded


def test_a_lexical_search_of_a_named_store_leaves_the_platform_folders_unlooked_up(indexed_store, tmp_path):
    """Issue #27: with --store and no KENNING_HOME nothing asks platformdirs (with tempfile
    and random) where Kenning's home or log folder is, until a record is written."""
    user_home = tmp_path / "user"
    user_home.mkdir()
    loaded, out = _modules_loaded_by(
        ["--store", str(indexed_store), "search", "--mode", "lexical", "argparse"],
        tmp_path / "unused",
        user_home=user_home,
    )
    assert "a.md" in out
    assert not {"platformdirs", "tempfile", "random"} & loaded
    assert list(user_home.iterdir()) == []  # nor made a log folder no record needed


def test_the_log_folder_is_made_when_a_record_needs_it(tmp_path):
    """The other side: the first record finds the folder, makes it user-only and writes."""
    user_home = tmp_path / "user"
    code = (
        "import logging, sys\n"
        "from kenning.workspace import start_logging, log_file\n"
        "start_logging()\n"
        "assert 'platformdirs' not in sys.modules\n"
        "logging.getLogger('kenning.test').warning('first record')\n"
        "print(log_file())\n"
    )
    env = dict(os.environ, HOME=str(user_home), PYTHONPATH=os.pathsep.join(sys.path))
    for name in ("KENNING_HOME", "XDG_STATE_HOME"):
        env.pop(name, None)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    path = Path(done.stdout.strip())
    assert path.is_relative_to(user_home) and "first record" in path.read_text(encoding="utf-8")
    assert path.parent.stat().st_mode & 0o777 == 0o700


def test_a_deferred_module_is_the_real_one_on_first_use():
    """What uses a module after the CLI deferred it gets the real thing."""
    code = (
        "import sys\n"
        "import kenning.cli\n"
        "import dataclasses, inspect, urllib.parse\n"
        "assert 'ast' not in sys.modules\n"
        "assert urllib.parse.urlsplit('http://[::1]:8/x').hostname == '::1'\n"
        "import ipaddress\n"
        "assert ipaddress.ip_address('127.0.0.1').is_loopback and type(sys.modules['ipaddress']).__name__ == 'module'\n"
        "import bz2, lzma, traceback\n"
        "assert lzma.decompress(lzma.compress(bz2.decompress(bz2.compress(b'kenning')))) == b'kenning'\n"
        "assert traceback.format_exception(ValueError('x'))[-1] == 'ValueError: x\\n'\n"
        "@dataclasses.dataclass\n"
        "class Point:\n"
        "    x: int\n"
        "    y: int = 0\n"
        "print(Point.__doc__, inspect.isclass(Point), str(inspect.signature(Point)))\n"
        "print(sys.modules['inspect'].getmodule(Point).__name__, sys.modules['inspect'] is not inspect)\n"
    )
    done = _python(code)
    assert done.stdout.splitlines() == ["Point(x: int, y: int = 0) True (x: int, y: int = 0) -> None", "__main__ True"]


def test_a_semantic_search_still_loads_what_it_needs(indexed_store, tmp_path):
    """The guard above must be able to fail: the same runner sees numpy when vectors are searched."""
    loaded, out = _modules_loaded_by(
        ["--store", str(indexed_store), "--model", "fake", "search", "--mode", "hybrid", "argparse"],
        tmp_path / "home",
    )
    assert "a.md" in out
    assert "numpy" in loaded and "kenning.search.vector" in loaded


def test_a_remembered_query_does_not_load_the_real_model(tmp_path):
    """The bundled model's fingerprint is known without loading it: a query whose vector
    the store remembers (storage.query_vectors) never imports fastembed or onnxruntime."""
    from kenning.embedding import FakeEmbedder, resolve_embedder
    from kenning.storage import open_store, query_vectors

    model = resolve_embedder(None, tmp_path / "models", threads=1)  # the default, not loaded
    stand_in = FakeEmbedder(dim=model.dim)  # vectors in the real model's name, made in microseconds
    stand_in.fingerprint = model.fingerprint
    store = open_store(tmp_path / "k.db")
    try:
        notes = write_files(tmp_path / "notes", {"a.md": "# Parsing\nParse command line arguments with argparse.\n"})
        index_folder(store, notes, stand_in)
        query_vectors.remember(
            store, model.fingerprint, {"argparse": stand_in.embed_query("argparse")}, (), now=1.0, cap=1000
        )
    finally:
        store.close()
    args = ["--store", str(tmp_path / "k.db"), "--model", "default", "search", "--json", "--explain", "argparse"]
    loaded, out = _modules_loaded_by(args, tmp_path / "home")
    assert "vector" in json.loads(out.splitlines()[1])["breakdown"]["lists"]  # a semantic search (line 0: the query)
    assert not {m.split(".")[0] for m in loaded} & {"fastembed", "onnxruntime", "tokenizers"}
    loaded, _ = _modules_loaded_by([*args[:-1], "parse arguments"], tmp_path / "home")
    assert "onnxruntime" in loaded  # a query never searched loads the model: the check above can fail


def test_no_regular_expression_is_compiled_while_the_lexical_path_is_imported(tmp_path):
    """Issue #27 item 4: Kenning's patterns compile when first used (core.patterns)."""
    code = (
        "import re, sys, json\n"
        "compiled = []\n"
        "real = re.compile\n"
        "def counting(pattern, flags=0):\n"
        "    caller = sys._getframe(1).f_code.co_filename\n"
        "    if '/kenning/' in caller.replace(chr(92), '/'):\n"
        "        compiled.append((caller, str(pattern)[:40]))\n"
        "    return real(pattern, flags)\n"
        "re.compile = counting\n"
        "import kenning.cli.main, kenning.cli.commands, kenning.cli.output, kenning.search.engine, kenning.workspace\n"
        "print(json.dumps(compiled))\n"
    )
    done = _python(code)
    assert json.loads(done.stdout) == []


def test_a_lazy_pattern_behaves_as_the_compiled_one():
    import re

    from kenning.core.patterns import lazy_pattern

    lazy = lazy_pattern(r"(\w+)-(\d+)", re.IGNORECASE)
    real = re.compile(r"(\w+)-(\d+)", re.IGNORECASE)
    text = "Build-12 and TEST-7"
    assert [m.groups() for m in lazy.finditer(text)] == [m.groups() for m in real.finditer(text)]
    assert lazy.sub(r"\2", text) == real.sub(r"\2", text) and lazy.groups == 2
    assert lazy.search(text, 5).span() == real.search(text, 5).span()


def test_the_lexical_path_generates_no_dataclass_while_it_is_imported():
    """Issue #27 item 4: a dataclass's methods (six `exec`s, ~0.5-1 ms a class on 3.11) are
    generated when the class is first used (core.records.Record), not at import: these
    modules define 52 and a lexical search makes 28.  Two are made at import: Settings
    (its fields name the settings) and Proximity (a module-level default)."""
    code = (
        "import dataclasses, json\n"
        "made = []\n"
        "real = dataclasses._process_class\n"
        "def counting(cls, *args, **kwargs):\n"
        "    made.append(cls.__qualname__)\n"
        "    return real(cls, *args, **kwargs)\n"
        "dataclasses._process_class = counting\n"
        "import kenning.cli.main, kenning.cli.commands, kenning.cli.output, kenning.search.engine, kenning.workspace\n"
        "print(json.dumps(made))\n"
    )
    assert sorted(json.loads(_python(code).stdout)) == ["Proximity", "Settings"]


def test_every_dataclass_of_kenning_is_a_record():
    """The rule above holds for every class: none is made with @dataclass at import."""
    import re

    app = Path(__file__).resolve().parents[1] / "app" / "kenning"
    decorated = [
        f"{path.relative_to(app)}:{number}"
        for path in sorted(app.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.match(r"\s*@(dataclasses\.)?dataclass\b", line)
    ]
    assert decorated == []


def test_the_cli_is_imported_without_garbage_collection_and_commands_run_with_it(indexed_store, tmp_path):
    """Issue #27 item 4: the collector walked the import's objects ~35 times in a lexical
    search; the launcher turns it on after the imports (and freezes what they made), so a
    long-running command (serve, the app) still collects."""
    code = (
        "import gc, sys\n"
        "seen = []\n"
        "class Watch:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name in ('kenning.cli.main', 'kenning.cli.commands'):\n"
        "            seen.append((name, gc.isenabled()))\n"
        "sys.meta_path.insert(0, Watch())\n"
        "import kenning.launcher\n"
        "code = kenning.launcher.main(sys.argv[1:])\n"
        "print(seen, gc.isenabled(), gc.get_freeze_count() > 10000, code)\n"
    )
    env = dict(os.environ, KENNING_HOME=str(tmp_path / "home"), PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run(
        [sys.executable, "-c", code, "--store", str(indexed_store), "status", "--no-service"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    last = done.stdout.splitlines()[-1]
    assert last == "[('kenning.cli.main', False), ('kenning.cli.commands', True)] True True 0", done.stdout
