"""kenning.gitinfo — everything in Kenning that talks to git.

Runs the git executable through one runner (gitinfo._git) that switches off every
mechanism by which a repository's config could run a program; every failure surfaces
as kenning.core.SourceError with a message fit to show the user.  Functions return data
and never print.
"""

from kenning.gitinfo.files import list_files
from kenning.gitinfo.history import path_commit_times, recent_paths
from kenning.gitinfo.repo import RepoInfo, inspect_repo, is_git_repo

__all__ = [
    "RepoInfo",
    "inspect_repo",
    "is_git_repo",
    "list_files",
    "path_commit_times",
    "recent_paths",
]
