"""Shell completion for bash, zsh and fish, generated from the argument parser by shtab.

shtab writes a static script per shell from the parser itself, so commands and options
complete without starting Python on every Tab. Paths complete as the shell completes
them (`sources add DIR`, `eval DIR`, `--store FILE`, `links FILE`); model names (`models
use NAME`) are written into the script when it is made. Source names and tags are
dynamic: the script asks `kenning sources list --names` when a source name is wanted
(`sources remove|enable|disable|globs NAME`, `index NAME`, `source:` in a query) and
`kenning tags --names` for `tag:` in a query.

Tags come from the notes and source names from folder names, either may be hostile:
bash never hands them to `compgen -W`
(which expands `$(…)` in its word list) but compares each line with the word typed
(`_kenning_matching`), zsh gets them through compadd (a `($(…))` action would evaluate
them), fish takes command output as words without evaluating it.
"""

from __future__ import annotations

import argparse
import shlex

from kenning import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

SHELLS = ("bash", "zsh", "fish")
NAMES = "kenning sources list --names 2>/dev/null"
FILTERS = "kenning sources list --names --as-filter 2>/dev/null"
TAG_FILTERS = "kenning tags --names --as-filter 2>/dev/null"
TAG_NAMES = "kenning tags --names 2>/dev/null"

# Bash splits words at ':' (COMP_WORDBREAKS), so `source:no` reaches the function as
# the words `source`, `:`, `no`; with ':' removed from the breaks it is one word.
_BASH_PREAMBLE = f"""
_kenning_source_names() {{
  {NAMES} | _kenning_matching "$1"
}}

_kenning_query_words() {{
  local IFS=$'\\n' cur="$1" before="${{COMP_WORDS[COMP_CWORD-1]}}" before2="${{COMP_WORDS[COMP_CWORD-2]}}"
  if [[ "$cur" == ":" && "$before" == source ]]; then
    {NAMES} | _kenning_matching ""
  elif [[ "$before" == ":" && "$before2" == source ]]; then
    {NAMES} | _kenning_matching "$cur"
  elif [[ "$cur" == source:* ]]; then
    {FILTERS} | _kenning_matching "$cur"
  elif [[ "$cur" == ":" && "$before" == tag ]]; then
    {TAG_NAMES} | _kenning_matching ""
  elif [[ "$before" == ":" && "$before2" == tag ]]; then
    {TAG_NAMES} | _kenning_matching "$cur"
  elif [[ "$cur" == tag:* ]]; then
    {TAG_FILTERS} | _kenning_matching "$cur"
  fi
}}

# The lines of stdin that start with $1, printed as they are: never expanded by the shell.
_kenning_matching() {{
  local line
  while IFS= read -r line; do
    [[ "$line" == "$1"* ]] && printf '%s\n' "$line"
  done
}}
"""

# zsh evaluates a `($(command))` action's words (a tag or a source name `$(id>x)` would
# run): compadd is handed the lines as they are instead.
_ZSH_PREAMBLE = f"""
_kenning_source_names() {{
  local -a words
  words=("${{(@f)$({NAMES})}}")
  compadd -- "${{words[@]}}"
}}

_kenning_query_words() {{
  local -a words
  words=("${{(@f)$({FILTERS}; {TAG_FILTERS})}}")
  compadd -- "${{words[@]}}"
}}
"""
SOURCE_NAME = {
    "bash": "_kenning_source_names",
    "zsh": "_kenning_source_names",
    "fish": f"({NAMES})",
    "preamble": {"bash": _BASH_PREAMBLE, "zsh": _ZSH_PREAMBLE},
}
QUERY_WORD = {
    "bash": "_kenning_query_words",
    "zsh": "_kenning_query_words",
    "fish": f"({FILTERS}; {TAG_FILTERS})",
    "preamble": {"bash": _BASH_PREAMBLE, "zsh": _ZSH_PREAMBLE},
}


def static_words(function: str, words: list[str]) -> dict[str, Any]:
    """A completer offering fixed words (written into the script: nothing runs on Tab)."""
    here = "\n".join(words)
    bash = f"{function}() {{\n  _kenning_matching \"$1\" <<'KENNING_WORDS'\n{here}\nKENNING_WORDS\n}}\n"
    return {
        "bash": function,
        "zsh": "(" + " ".join(shlex.quote(w) for w in words) + ")",
        "fish": " ".join(shlex.quote(w) for w in words),
        "preamble": {"bash": bash},  # _kenning_matching comes with _BASH_PREAMBLE (source names)
    }


def completion_script(parser: argparse.ArgumentParser, shell: str, models: list[str] | None = None) -> str:
    """models: the names `models use` completes (None: the installed catalog's)."""
    import shtab  # only when a script is asked for: the parser is built for every command

    _mark_dynamic_arguments(parser)
    _mark_paths(parser, shtab.FILE, shtab.DIRECTORY)
    _mark_models(parser, _model_names() if models is None else models)
    script = shtab.complete(parser, shell=shell)
    return _every_query_word(script, parser) if shell == "zsh" else script


def _every_query_word(script: str, parser: argparse.ArgumentParser) -> str:
    """zsh: shtab writes a `nargs="+"` positional as `(*):message:action`, which completes
    the first word only; `*:message:action` completes every word of the query, so
    `source:` and `tag:` complete wherever they are typed."""
    query = _positional(_subparsers(parser)["search"], "query")
    return script.replace('"(*):' + _zsh_escaped(query.help), '"*:' + _zsh_escaped(query.help))


def _zsh_escaped(text: str) -> str:
    return text.replace('"', '\\"')


def _mark_dynamic_arguments(parser: argparse.ArgumentParser) -> None:
    """Attach the source-name completers to the arguments that take a source name or a query."""
    commands = _subparsers(parser)
    for action in ("remove", "enable", "disable", "globs"):
        _positional(_subparsers(commands["sources"])[action], "name").complete = SOURCE_NAME
    _positional(commands["index"], "name").complete = SOURCE_NAME
    _positional(commands["search"], "query").complete = QUERY_WORD


def _mark_paths(parser: argparse.ArgumentParser, file: Any, directory: Any) -> None:
    """The arguments that name a file or a folder complete as the shell completes paths."""
    commands = _subparsers(parser)
    _option(parser, "--store").complete = file
    _positional(_subparsers(commands["sources"])["add"], "path").complete = directory
    _positional(commands["eval"], "dataset").complete = directory
    _option(commands["eval"], "--keep").complete = directory
    _positional(commands["links"], "path").complete = file


def _mark_models(parser: argparse.ArgumentParser, names: list[str]) -> None:
    models = _subparsers(parser)["models"]
    _positional(models, "use").complete = static_words("_kenning_models_actions", ["use", "list"])
    _positional(models, "name").complete = static_words("_kenning_model_names", names)


def _model_names() -> list[str]:
    """The bundled model's name and fastembed's catalog, as `kenning models` lists them."""
    from kenning.embedding import list_models

    try:
        return [info.name for info in list_models()]
    except Exception:  # a broken model install must not cost the rest of completion
        return ["default"]


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:  # argparse keeps no public list of its subcommands
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _positional(parser: argparse.ArgumentParser, dest: str) -> Any:
    # Any: shtab reads a `complete` attribute that argparse's Action does not declare.
    return next(a for a in parser._actions if a.dest == dest and not a.option_strings)


def _option(parser: argparse.ArgumentParser, flag: str) -> Any:
    return next(a for a in parser._actions if flag in a.option_strings)
