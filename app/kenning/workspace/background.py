"""The embedding model, loaded once in the background by a long-lived front end.

Loading the ONNX model takes a second or more; the first question to the MCP server
or the service should not wait for it.  Until it is ready, searches run on words only
and say so (workspace.searching), or wait for it (`wait`) when a caller would rather.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from kenning.embedding import Embedder


class BackgroundModel:
    def __init__(self, load: Callable[[], Embedder], *, name: str = "kenning-model") -> None:
        self._load = load
        self._embedder: Embedder | None = None
        self._error: str | None = None
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> BackgroundModel:
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            embedder = self._load()
            embedder.embed_query("warm up")  # the first call builds the session: pay it here
            self._embedder = embedder
        except Exception as exc:
            from kenning.workspace import user_message

            self._error = user_message(exc)
        finally:
            self._done.set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._done.wait(timeout)

    @property
    def embedder(self) -> Embedder | None:
        """The model once loaded; None while loading or when loading failed."""
        return self._embedder if self._done.is_set() else None

    @property
    def state(self) -> str:
        if not self._done.is_set():
            return "loading"
        return "ready" if self._embedder is not None else "failed"

    @property
    def error(self) -> str | None:
        return self._error
