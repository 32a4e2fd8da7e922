#!/usr/bin/env python3
"""Regenerate the shipped icons in resources/icons/ from assets/artwork/kenning-icon.svg.

    python3 packaging/render_icons.py

Writes resources/icons/kenning.svg (a copy of the artwork), the freedesktop theme
layout resources/icons/hicolor/<n>x<n>/apps/<APP_ID>.png for every size in SIZES, and
hicolor/scalable/apps/<APP_ID>.svg.  Renders with rsvg-convert (Debian: librsvg2-bin)
when it is on PATH, else with the cairosvg Python package.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

APP_ID = "io.github.kenning.Kenning"
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
ROOT = Path(__file__).resolve().parent.parent
ARTWORK = ROOT / "assets" / "artwork" / "kenning-icon.svg"
ICONS = ROOT / "resources" / "icons"


def render(svg: Path, png: Path, size: int) -> None:
    png.parent.mkdir(parents=True, exist_ok=True)
    if shutil.which("rsvg-convert"):
        subprocess.run(
            ["rsvg-convert", "-w", str(size), "-h", str(size), "-o", str(png), str(svg)],
            check=True,
        )
        return
    try:
        import cairosvg
    except ImportError:
        sys.exit("render_icons: need rsvg-convert (apt install librsvg2-bin) or pip install cairosvg")
    cairosvg.svg2png(url=str(svg), write_to=str(png), output_width=size, output_height=size)


def main() -> int:
    ICONS.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(ARTWORK, ICONS / "kenning.svg")
    scalable = ICONS / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg"
    scalable.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(ARTWORK, scalable)
    for size in SIZES:
        png = ICONS / "hicolor" / f"{size}x{size}" / "apps" / f"{APP_ID}.png"
        render(ARTWORK, png, size)
        print(f"{png.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
