"""Shell completion for bash, zsh and fish, generated from the argument parser by shtab.

shtab writes a static script per shell from the parser itself, so commands and options
complete without starting Python on every Tab. Only source names are dynamic: the
script asks `kenning sources list --names` for them when a source name is wanted
(`sources remove|enable|disable|globs NAME`, `index NAME`) and for `source:` in a query.
"""

from __future__ import annotations

import argparse
from typing import Any

SHELLS = ("bash", "zsh", "fish")
NAMES = "kenning sources list --names 2>/dev/null"
FILTERS = "kenning sources list --names --as-filter 2>/dev/null"

# Bash splits words at ':' (COMP_WORDBREAKS), so `source:no` reaches the function as
# the words `source`, `:`, `no`; with ':' removed from the breaks it is one word.
_BASH_PREAMBLE = f"""
_kenning_source_names() {{
  local IFS=$'\\n'
  compgen -W "$({NAMES})" -- "$1"
}}

_kenning_query_words() {{
  local IFS=$'\\n' cur="$1" before="${{COMP_WORDS[COMP_CWORD-1]}}" before2="${{COMP_WORDS[COMP_CWORD-2]}}"
  if [[ "$cur" == ":" && "$before" == source ]]; then
    compgen -W "$({NAMES})" -- ""
  elif [[ "$before" == ":" && "$before2" == source ]]; then
    compgen -W "$({NAMES})" -- "$cur"
  elif [[ "$cur" == source:* ]]; then
    compgen -W "$({FILTERS})" -- "$cur"
  fi
}}
"""

SOURCE_NAME = {
    "bash": "_kenning_source_names",
    "zsh": f"($({NAMES}))",
    "fish": f"({NAMES})",
    "preamble": {"bash": _BASH_PREAMBLE},
}
QUERY_WORD = {
    "bash": "_kenning_query_words",
    "zsh": f"($({FILTERS}))",
    "fish": f"({FILTERS})",
    "preamble": {"bash": _BASH_PREAMBLE},
}


def completion_script(parser: argparse.ArgumentParser, shell: str) -> str:
    import shtab  # only when a script is asked for: the parser is built for every command

    _mark_dynamic_arguments(parser)
    return shtab.complete(parser, shell=shell)


def _mark_dynamic_arguments(parser: argparse.ArgumentParser) -> None:
    """Attach the source-name completers to the arguments that take a source name or a query."""
    commands = _subparsers(parser)
    for action in ("remove", "enable", "disable", "globs"):
        _positional(_subparsers(commands["sources"])[action], "name").complete = SOURCE_NAME
    _positional(commands["index"], "name").complete = SOURCE_NAME
    _positional(commands["search"], "query").complete = QUERY_WORD


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:  # argparse keeps no public list of its subcommands
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _positional(parser: argparse.ArgumentParser, dest: str) -> Any:
    # Any: shtab reads a `complete` attribute that argparse's Action does not declare.
    return next(a for a in parser._actions if a.dest == dest and not a.option_strings)
