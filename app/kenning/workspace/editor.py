"""Opening a hit in the user's editor at its line: presets, custom commands, no shell.

A command is a template split into arguments with shlex *before* anything is put in;
{file}, {line} and {column} are then replaced inside each argument, all in one pass, so
a file name holding `{line}` stays the file's name.  The file name is
therefore always one argument of its own, never parsed by a shell, so a note called
`$(rm -rf ~).md` or `a b; c.md` is just a file name.  Paths are absolute, so a name
beginning with "-" can never be read as an option.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
from typing import IO, TYPE_CHECKING

from kenning.core.errors import KenningError
from kenning.core.records import Record

if TYPE_CHECKING:  # launching is rare; the settings validate the editor on every command
    import subprocess

SYSTEM = "system"  # the desktop's default application for the file type (no line)
PLACEHOLDERS = ("{file}", "{line}", "{column}")
_PLACEHOLDER = re.compile("|".join(re.escape(p) for p in PLACEHOLDERS))


class EditorPreset(Record, frozen=True):
    key: str
    label: str
    command: str  # template; "" for the system default


def _terminal() -> str:
    """The user's terminal for console editors: $TERMINAL, else the Debian alternative."""
    return os.environ.get("TERMINAL") or ("x-terminal-emulator" if sys.platform.startswith("linux") else "xterm")


PRESETS = (
    EditorPreset(SYSTEM, "System default application (opens the file, not the line)", ""),
    EditorPreset("vscode", "Visual Studio Code", "code -g {file}:{line}:{column}"),
    EditorPreset("vim", "Vim (in a terminal)", "{terminal} -e vim +{line} {file}"),
    EditorPreset("neovim", "Neovim (in a terminal)", "{terminal} -e nvim +{line} {file}"),
    EditorPreset("emacs", "Emacs", "emacs +{line}:{column} {file}"),
    EditorPreset("sublime", "Sublime Text", "subl {file}:{line}:{column}"),
    EditorPreset("jetbrains", "JetBrains IDE (idea)", "idea --line {line} {file}"),
)
PRESET_KEYS = tuple(p.key for p in PRESETS)


class EditorError(KenningError):
    """The editor could not be started; the message says what to do."""


def validate_editor(value: object) -> str:
    """A preset key, or a custom command naming {file} (SettingsError-compatible text)."""
    text = str(value).strip()
    if text in PRESET_KEYS:
        return text
    if not text:
        return SYSTEM
    try:
        parts = shlex.split(text)
    except ValueError as exc:
        raise EditorError(f"The editor command cannot be read ({exc}); check its quotes.") from None
    if not any("{file}" in part for part in parts):
        raise EditorError("A custom editor command must contain {file}, e.g. `myeditor --line {line} {file}`.")
    return text


def template_for(setting: str) -> str:
    for preset in PRESETS:
        if preset.key == setting:
            return preset.command
    return setting


def command_for(setting: str, path: str, line: int = 1, column: int = 1) -> list[str] | None:
    """argv opening `path` at `line`; None for the system default (the front end opens it)."""
    template = template_for(setting)
    if not template:
        return None
    values = {"{file}": os.path.abspath(path), "{line}": str(max(1, line)), "{column}": str(max(1, column))}
    argv = []
    for part in shlex.split(template):
        if part == "{terminal}":
            argv.extend(shlex.split(_terminal()))
            continue
        # One pass over the template's text: what was put in is never looked at again.
        argv.append(_PLACEHOLDER.sub(lambda m: values[m.group(0)], part))
    return argv


class Launched(Record):
    """A started editor; `problem()` tells whether it failed right away."""

    argv: list[str]
    process: subprocess.Popen[bytes]
    errors: IO[bytes]  # temporary file holding the editor's stderr

    def problem(self) -> str | None:
        """None while running or after a clean exit; else what went wrong and what to do."""
        code = self.process.poll()
        if code is None or code == 0:
            return None
        self.errors.seek(0)
        said = self.errors.read().decode("utf-8", errors="replace").strip().splitlines()
        detail = f": {said[-1][:300]}" if said else ""
        return (
            f"The editor command `{shlex.join(self.argv[:1])}` stopped with exit code {code}{detail}. "
            "Check the command in Settings → Editor."
        )


def launch(argv: list[str]) -> Launched:
    """Start the editor detached from Kenning; EditorError when it cannot start at all."""
    import subprocess
    import tempfile

    program = argv[0]
    if shutil.which(program) is None:
        raise EditorError(
            f"`{program}` is not installed or not on PATH. Choose another editor in Settings → Editor, "
            "or give the program's full path in a custom command."
        )
    errors = tempfile.TemporaryFile()  # noqa: SIM115 -- kept open for the editor, read by problem()
    try:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=errors,
            start_new_session=True,  # closing Kenning never closes the editor
            shell=False,
        )
    except OSError as exc:
        errors.close()
        raise EditorError(
            f"`{program}` could not be started ({exc.strerror or exc}). Check Settings → Editor."
        ) from None
    return Launched(argv, process, errors)
