"""kenning.workspace — the application layer between the front ends and the core.

The CLI, the desktop app (and any later front end, such as an MCP server) open the
store, manage sources, read and change settings, choose the engine for a search
mode, run the indexer and word errors through this package and nothing else: they
never import kenning.storage (tests/test_layering.py), and they hold no policy of
their own.  See docs/architecture.md §2.
"""

from __future__ import annotations

from kenning import TYPE_CHECKING
from kenning.storage import open_store
from kenning.storage.paths import default_store_path, kenning_home
from kenning.workspace.logs import log_file, setup_logging, start_logging
from kenning.workspace.messages import report, user_message
from kenning.workspace.searcher import Searcher
from kenning.workspace.searching import SearchPlan, plan_search, search_options
from kenning.workspace.settings import Settings, SettingsError
from kenning.workspace.sources import SourceOverview, SourceStats, describe_repo
from kenning.workspace.workspace import EmbedderFactory, StoreStatus, Workspace, store_needs_upgrade

if TYPE_CHECKING:
    from typing import Any

    from kenning.gitinfo import RepoInfo


def __getattr__(name: str) -> Any:
    if name == "RepoInfo":  # loads git: only for the front ends that describe a repository
        from kenning.gitinfo import RepoInfo

        return RepoInfo
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "EmbedderFactory",
    "RepoInfo",
    "SearchPlan",
    "Searcher",
    "Settings",
    "SettingsError",
    "SourceOverview",
    "SourceStats",
    "StoreStatus",
    "Workspace",
    "store_needs_upgrade",
    "default_store_path",
    "describe_repo",
    "kenning_home",
    "log_file",
    "open_store",
    "plan_search",
    "report",
    "search_options",
    "setup_logging",
    "start_logging",
    "user_message",
]
