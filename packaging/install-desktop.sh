#!/usr/bin/env bash
# Put Kenning in the desktop's application menu for the current user: the .desktop file,
# the AppStream metainfo and the icons, under ${XDG_DATA_HOME:-~/.local/share}.
#
#   dist/kenning/install-desktop.sh                 from a built bundle: launches dist/kenning/kenning
#   bash packaging/install-desktop.sh               from a checkout, for a pipx/venv install:
#                                                   launches the kenning-gui found on PATH
#   bash packaging/install-desktop.sh --exec PATH   launch PATH instead
#   ... --uninstall                                 remove what an earlier run installed
set -euo pipefail
app_id=io.github.kenning.Kenning
here="$(cd "$(dirname "$0")" && pwd)"
data_home="${XDG_DATA_HOME:-$HOME/.local/share}"
launcher=""
uninstall=""
while [ $# -gt 0 ]; do
  case "$1" in
    --exec) launcher="$2"; shift 2 ;;
    --uninstall) uninstall=1; shift ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "install-desktop: unknown option $1" >&2; exit 2 ;;
  esac
done

if [ -d "$here/share/applications" ]; then   # inside a bundle (dist/kenning/)
  desktop_src="$here/share/applications/$app_id.desktop"
  metainfo_src="$here/share/metainfo/$app_id.metainfo.xml"
  icons_src="$here/share/icons/hicolor"
  default_launcher="$here/kenning"
else                                          # a source checkout (packaging/)
  desktop_src="$here/linux/$app_id.desktop"
  metainfo_src="$here/linux/$app_id.metainfo.xml"
  icons_src="$here/../resources/icons/hicolor"
  default_launcher="$(command -v kenning-gui || true)"
fi

refresh_caches() {
  command -v update-desktop-database >/dev/null && update-desktop-database -q "$data_home/applications" || true
  command -v gtk-update-icon-cache >/dev/null && gtk-update-icon-cache -q -t "$data_home/icons/hicolor" || true
}

if [ -n "$uninstall" ]; then
  rm -f "$data_home/applications/$app_id.desktop" "$data_home/metainfo/$app_id.metainfo.xml"
  find "$data_home/icons/hicolor" -path "*/apps/$app_id.*" -delete 2>/dev/null || true
  refresh_caches
  echo "Removed Kenning's menu entry and icons from $data_home."
  exit 0
fi

launcher="${launcher:-$default_launcher}"
if [ -z "$launcher" ] || [ ! -x "$launcher" ]; then
  echo "install-desktop: no Kenning launcher found (kenning-gui is not on PATH)." >&2
  echo "Install Kenning first (pipx install ...), or pass --exec /path/to/kenning-gui." >&2
  exit 1
fi
launcher="$(cd "$(dirname "$launcher")" && pwd)/$(basename "$launcher")"

mkdir -p "$data_home/applications" "$data_home/metainfo"
# Absolute paths, so the menu entry works whatever PATH the session has.  Exec quoting
# (Desktop Entry spec): the path in double quotes with \ " ` $ backslash-escaped, then
# every backslash doubled as in any string value, and % written as %%.
q=${launcher//\\/\\\\}
q=${q//\"/\\\"}
q=${q//\`/\\\`}
q=${q//\$/\\\$}
q=${q//\\/\\\\}
q=${q//%/%%}
while IFS= read -r line; do
  case "$line" in
    Exec=*) printf 'Exec="%s"\n' "$q" ;;
    TryExec=*) printf 'TryExec=%s\n' "${launcher//\\/\\\\}" ;;
    *) printf '%s\n' "$line" ;;
  esac
done < "$desktop_src" > "$data_home/applications/$app_id.desktop"
cp "$metainfo_src" "$data_home/metainfo/"
(cd "$icons_src" && find . -name "$app_id.*" -print0 | while IFS= read -r -d '' icon; do
  mkdir -p "$data_home/icons/hicolor/$(dirname "$icon")"
  cp "$icon" "$data_home/icons/hicolor/$icon"
done)
refresh_caches
echo "Installed Kenning's menu entry ($data_home/applications/$app_id.desktop) launching $launcher."
