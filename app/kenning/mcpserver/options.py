"""What `kenning mcp` accepts on its command line and its tools accept (cheap to import: no SDK)."""

from __future__ import annotations

CLIENTS = (
    "claude",
    "cursor",
    "vscode",
    "zed",
    "http",
)  # configs --print-config writes ("http": --http's URL and token)
DEFAULT_HTTP_PORT = 8765  # `kenning mcp --http` without a port
DEFAULT_MAX_BYTES = 24_000  # an answer's cap: a few thousand tokens of an assistant's context
MIN_MAX_BYTES = 1_000  # below this not even one hit (without its breakdown) fits
MAX_LIMIT = 50  # hits (or related notes) one answer may ask for
# A search that wants meaning waits this long for the model being loaded (a one-shot
# client asks at once; loading takes 1-1.5 s) before it answers on keywords and says so.
MODEL_WAIT_SECONDS = 5.0


def check_max_bytes(value: int) -> int:
    """The cap as given, or an error saying the least it may be (never silently raised)."""
    if value < MIN_MAX_BYTES:
        raise ValueError(f"--max-bytes {value} is below the least an answer needs ({MIN_MAX_BYTES} bytes)")
    return value


# The `index` tool waits this long for the store's indexing lock: the server's own
# watcher (or its start-up check) may hold it for a moment.
INDEX_LOCK_WAIT_SECONDS = 60.0
