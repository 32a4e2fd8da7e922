"""What `kenning mcp` accepts on its command line (cheap to import: no SDK)."""

from __future__ import annotations

CLIENTS = ("claude", "cursor", "vscode", "zed")  # assistants whose config --print-config writes
DEFAULT_MAX_BYTES = 24_000  # an answer's cap: a few thousand tokens of an assistant's context
MIN_MAX_BYTES = 2_000  # below this not even one hit with its breakdown fits
