"""Helpers shared by the GUI tests and the responsiveness benchmark."""

from __future__ import annotations

from pathlib import Path

WORDS = ("index query vector commit branch cache latency thread window render parser token "
         "schema migration journal snapshot replica cluster shard quorum lease").split()


def write_many(root: Path, count: int) -> Path:
    """count small markdown notes in nested folders, each with distinct words."""
    for i in range(count):
        path = root / f"d{i // 100:03d}" / f"note-{i:05d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        words = " ".join(WORDS[(i * 7 + k) % len(WORDS)] for k in range(60))
        path.write_text(f"# Note {i}\n\n{words}\n\n## Details {i}\n\n{words[::-1]}\n", encoding="utf-8")
    return root
