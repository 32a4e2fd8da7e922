"""A realistic workspace for ranking tests: a folder of a developer's notes beside a
linked repository (a progress-bar library with a command-line front end, the shapes of
progressbar2 and click), written by hand so every test knows what each file holds.

The queries tests run against it (QUERIES) are the kind people type: an identifier, a
few words, a question, a filter with a word.
"""

from __future__ import annotations

from pathlib import Path

from kenning_testing import write_files

BAR = '''"""The progress bar itself: widgets around a value moving from min to max."""

import math
import sys
import time

from progressbar import widgets as widgets_module
from progressbar.utils import StreamWrapper


class ProgressBar:
    """The ProgressBar class which updates and prints the bar.

    A bar is given a max_value (or UnknownLength) and a list of widgets; each call to
    update() redraws the line on the terminal when enough time has passed.  Use it as a
    context manager, or wrap an iterable: ``for item in ProgressBar()(items)``.
    """

    def __init__(self, min_value=0, max_value=None, widgets=None, fd=sys.stderr, poll_interval=0.1):
        self.min_value = min_value
        self.max_value = max_value
        self.widgets = widgets or widgets_module.default_widgets()
        self.fd = StreamWrapper(fd)
        self.poll_interval = poll_interval
        self.value = min_value
        self.start_time = None
        self.last_update_time = None

    def __enter__(self):
        return self.start()

    def __exit__(self, exc_type, exc_value, traceback):
        self.finish()

    def __call__(self, iterable, max_value=None):
        if max_value is None and hasattr(iterable, "__len__"):
            max_value = len(iterable)
        self.max_value = max_value
        for item in iterable:
            yield item
            self.update(self.value + 1)
        self.finish()

    def start(self):
        self.start_time = time.monotonic()
        self.update(self.min_value, force=True)
        return self

    def update(self, value, force=False):
        self.value = value
        now = time.monotonic()
        if force or self.last_update_time is None or now - self.last_update_time >= self.poll_interval:
            self.last_update_time = now
            self.fd.write("\\r" + self.render())

    def render(self):
        return "".join(widget(self) for widget in self.widgets)

    def finish(self):
        self.update(self.max_value or self.value, force=True)
        self.fd.write("\\n")
'''

BAR_TIMES = '''"""How far along a ProgressBar is, and how long it will take."""

from progressbar.bar import ProgressBar


def pct(bar: ProgressBar) -> float:
    """The percentage done of a ProgressBar, 0 to 100."""
    span = (bar.max_value or 0) - bar.min_value
    return 100.0 if span <= 0 else 100.0 * (bar.value - bar.min_value) / span


def eta(bar: ProgressBar) -> float | None:
    """Seconds left for a ProgressBar at its average speed so far (None before it moves)."""
    if not bar.start_time or bar.value <= bar.min_value:
        return None
    elapsed = time.monotonic() - bar.start_time
    return elapsed * (bar.max_value - bar.value) / (bar.value - bar.min_value)
'''

WIDGETS = '''"""Widgets: the pieces a ProgressBar draws, each a callable taking the bar."""

from progressbar.bar_times import eta, pct


def percentage(bar):
    return f"{pct(bar):5.1f}%"


def eta_widget(bar):
    left = eta(bar)
    return "ETA --:--" if left is None else f"ETA {int(left // 60):02d}:{int(left % 60):02d}"


def bar_widget(bar, width=30, fill="#"):
    done = int(width * pct(bar) / 100)
    return "[" + fill * done + " " * (width - done) + "]"


def default_widgets():
    return [percentage, " ", bar_widget, " ", eta_widget]
'''

DECORATORS = '''"""Decorators that hand a command's callback the objects it asks for."""

from functools import update_wrapper

from cli.core import get_current_context


def pass_context(f):
    """Marks a callback as wanting to receive the current context object as its first argument."""

    def new_func(*args, **kwargs):
        return f(get_current_context(), *args, **kwargs)

    return update_wrapper(new_func, f)


def pass_obj(f):
    """Like pass_context, but hands over the context's obj only (what the group stored)."""

    def new_func(*args, **kwargs):
        return f(get_current_context().obj, *args, **kwargs)

    return update_wrapper(new_func, f)
'''

COMMANDS = '''"""The command-line front end: `pb run` shows a bar while a job runs."""

import cli
from cli.decorators import pass_context

from progressbar.bar import ProgressBar


@cli.group()
@pass_context
def main(ctx):
    ctx.obj = {"quiet": False}


@main.command()
@pass_context
def run(ctx, count=100):
    with ProgressBar(max_value=count) as bar:
        for i in range(count):
            bar.update(i + 1)


@main.command()
@pass_context
def status(ctx):
    if not ctx.obj["quiet"]:
        print("idle")
'''

README = """# progressbar

A text progress bar for long-running jobs: percentage, a bar and an ETA, redrawn in
place on the terminal.

## Usage

Wrap an iterable, or update the bar yourself:

```python
from progressbar.bar import ProgressBar

for item in ProgressBar()(items):
    process(item)
```

## Command line

`pb run` shows a bar while a job runs; commands receive the context through
`pass_context`.
"""

REPO = {
    "README.md": README,
    "progressbar/__init__.py": '"""A text progress bar."""\n\nfrom progressbar.bar import ProgressBar\n',
    "progressbar/bar.py": BAR,
    "progressbar/bar_times.py": BAR_TIMES,
    "progressbar/widgets.py": WIDGETS,
    "progressbar/utils.py": (
        '"""Helpers."""\n\n\nclass StreamWrapper:\n    """Writes to a stream, flushing each line."""\n\n'
        "    def __init__(self, fd):\n        self.fd = fd\n\n    def write(self, text):\n"
        "        self.fd.write(text)\n        self.fd.flush()\n"
    ),
    "cli/decorators.py": DECORATORS,
    "cli/commands.py": COMMANDS,
    "cli/core.py": (
        '"""The current context of a running command."""\n\n_stack = []\n\n\n'
        "def get_current_context():\n    return _stack[-1]\n"
    ),
}

NOTES = {
    "inbox.md": "# Inbox\n\nThings to sort: the wibblequark idea from the meetup, and the sprint notes.\n",
    "sprint-12.md": (
        "# Sprint 12 notes\n\n## Done\n\nRelease 2.3 went out with the new exports.\n\n"
        "## Next\n\nProfile the indexer, write release notes, look at the flaky test.\n"
    ),
    "meeting-2024-03-04.md": (
        "# Meeting notes 2024-03-04\n\nAttendees: Ana, Bo.\n\nDecided to move the nightly job to 02:00 and "
        "to keep notes in the wiki.\n"
    ),
    "deploy.md": (
        "# How to deploy\n\n## Build\n\nBuild the image and push it to the registry.\n\n"
        "## Rollback\n\nTo undo a bad release, redeploy the previous tag, then undo the migration.\n"
    ),
    "postgres.md": "# Postgres tuning notes\n\nshared_buffers, work_mem and autovacuum settings for the reporting box.\n",
    "progress-ui.md": (
        "# Progress feedback in the UI\n\nLong jobs should show progress: a bar with a percentage and an ETA, "
        "updated at most ten times a second so the terminal is not flooded.\n"
    ),
    "python-tips.md": (
        "# Python tips\n\n## Context managers\n\nUse `with` for anything that must be closed: files, locks, "
        "progress bars.\n\n## Decorators\n\nfunctools.update_wrapper keeps the wrapped function's name and "
        "docstring.\n"
    ),
    "reading.md": "# Reading list\n\nNotes on books: Designing Data-Intensive Applications, The Pragmatic Programmer.\n",
    "retro.md": "# Retro\n\nThe release went out late; planning was bad; notes were scattered.\n",
    "cli-design.md": (
        "# Command-line design\n\nSubcommands share a context object; a decorator passes it to each callback "
        "so commands do not reach for globals.\n"
    ),
    "habits.md": "# Habits\n\nWrite notes daily. A bad habit is hard to undo.\n",
    "editor.md": "# Editor\n\nUndo and redo keys, notes on macros and the search panel.\n",
}

QUERIES = (
    "progressbar",
    "ext:py progressbar",
    "pass_context",
    "ProgressBar eta",
    "wibblequark",
    "how do I undo a bad release",
    "progress bar percentage",
    "context object decorator",
    "release notes",
    "notes",
    "postgres tuning",
    "source:repo update the bar",
    "meeting notes with decisions",
    "shared_buffers",
    "wrap an iterable",
    '"release notes" rollback',
    'how do I use "pass_context" in a command',
)


def build(root: Path, store, embedder, *, git: bool = True) -> None:
    """The repository (a git source named "repo") and the notes (a folder named "notes")
    written under root and indexed into store."""
    from datetime import datetime, timezone

    from gitutil import commit, make_repo
    from kenning_testing import index_folder

    repo = make_repo(root)
    commit(repo, REPO, datetime(2024, 5, 1, tzinfo=timezone.utc))
    index_folder(store, repo, embedder, name="repo", git=git)
    index_folder(store, write_files(root / "notes", NOTES), embedder, name="notes")


def build_store_file(root: Path) -> str:
    """The workspace built into root/store/kenning.db, embedded by the fake model and with
    that model set, so the CLI and the service embed queries the same way; its path."""
    from kenning.embedding import FakeEmbedder
    from kenning.storage import open_store
    from kenning.storage.settings import set_setting

    path = root / "store" / "kenning.db"
    store = open_store(path)
    try:
        set_setting(store, "embedding_model", "fake")
        build(root, store, FakeEmbedder())
    finally:
        store.close()
    return str(path)
