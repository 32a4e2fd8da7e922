"""Errors a user may see. Each message is written to be shown as is."""


class KenningError(Exception):
    """Base for every error Kenning raises on purpose."""


class SourceError(KenningError):
    """A source cannot be added, found or read (not a folder, not a git repo, ...)."""


class StoreError(KenningError):
    """The store cannot be opened or used (corrupt, newer schema, ...)."""


class StoreLockedError(StoreError):
    """Another indexer holds the store's indexing lock."""
