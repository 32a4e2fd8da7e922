"""Indexing limits that front ends show and settings validate, without importing the indexer."""

DEFAULT_SIZE_CAP = 2 * 1024 * 1024  # bytes: larger files are skipped when indexing
