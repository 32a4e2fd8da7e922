"""The store's change token as the search caches read it: once per search.

The word caches (TermStats, Vocabulary) keep what they read until the store changes,
and ask its change token (Store.version()) to know.  A team store answers that over
the network, a round trip each (~3 ms), and a search asked it for every word it looked
up (~30 a hybrid query).  While a search holds the token pinned, the caches read the
token it began with: a write committed during that search is seen by the next one (a
search sees the store as of its start, as it did when one write landed between two of
its words).  Pins are per thread, so a search on another thread reads its own.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Hashable, Iterator

from kenning.storage.api import Store


class ChangeToken:
    """Store.version(), read once per pinned span (a search) instead of on every call."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._local = threading.local()

    def current(self) -> Hashable:
        """The token the current pin read, else the store's token now."""
        if getattr(self._local, "depth", 0):
            return self._local.value  # type: ignore[no-any-return]
        return self.store.version()

    @contextlib.contextmanager
    def pinned(self) -> Iterator[None]:
        """Within it (on this thread), current() is the token read on entering the outermost pin."""
        local = self._local
        depth = getattr(local, "depth", 0)
        if not depth:
            local.value = self.store.version()
        local.depth = depth + 1
        try:
            yield
        finally:
            local.depth = depth
