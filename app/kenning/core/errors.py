"""Errors a user may see. Each message is written to be shown as is."""


class KenningError(Exception):
    """Base for every error Kenning raises on purpose."""


class SourceError(KenningError):
    """A source cannot be added, found or read (not a folder, not a git repo, ...)."""


class StoreError(KenningError):
    """The store cannot be opened or used (corrupt, newer schema, ...)."""


class StoreUnusable(StoreError):
    """The store's database refused it (busy, damaged, full...): `kind` says which, in
    storage.api.FailureKind's words; workspace.messages tells the user what to do."""

    def __init__(self, location: str, kind: str, detail: str) -> None:
        super().__init__(f"Cannot use the store {location} ({kind}: {detail})")
        self.location = location
        self.kind = kind
        self.detail = detail


class StoreLockedError(StoreError):
    """Another indexer holds the store's indexing lock."""


class StoreWatchedError(StoreLockedError):
    """A watcher indexes into the store, so it may not be moved aside now; storage raises
    it without words, workspace.messages says what to do."""

    def __init__(self, location: str) -> None:
        super().__init__(f"The store {location} is being watched")
        self.location = location
