"""Folders that are never a source: credentials, the system, Kenning's own files.

`kenning mcp --allow-writes` lets an assistant add sources, and text in an indexed note
can steer an assistant: indexing `~/.config` would make OAuth tokens (`gh/hosts.yml`)
searchable and readable through it.  Every front end refuses these folders as roots
(ingest.sources.add_source); only the command line can override, with PRIVATE_OVERRIDE.
"""

from __future__ import annotations

from pathlib import Path

# Folders that hold credentials (keys, tokens, browser logins) below the home folder:
# never a source, nor inside one, nor holding one (the home folder itself, `/`), because
# an assistant given `add_source` could make them searchable, steered by a note's text.
CREDENTIAL_FOLDERS = (
    ".ssh",
    ".gnupg",
    ".config",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".password-store",
    ".pki",
    ".mozilla",
    ".terraform.d",
    ".local/share/keyrings",
    "Library/Keychains",
)
# System folders: never a source nor inside one.
SYSTEM_FOLDERS = ("/etc", "/proc", "/sys", "/dev", "/boot", "/run", "/private/etc", "/System")
# Folders that hold everyone's files: never a source themselves.
SHARED_TOPS = ("/", "/usr", "/var", "/home", "/Users")
PRIVATE_OVERRIDE = "--allow-private-folder"


def private_folder_problem(root: Path, own: Path) -> str | None:
    """Why a resolved folder must not be a source (credentials, the system, Kenning's
    own folder `own`), or None."""
    home = Path.home().resolve()
    for name in CREDENTIAL_FOLDERS:
        secret = home / name
        if _inside(root, secret):
            return f"it is inside {secret}, which holds credentials"
        if _inside(secret, root):
            return f"it holds {secret}, which holds credentials"
    for system in SYSTEM_FOLDERS:
        if _inside(root, Path(system)):
            return f"it is a system folder ({system})"
    if str(root) in SHARED_TOPS:
        return "it holds everyone's files"
    own = own.expanduser().resolve()
    if _inside(root, own):
        return f"it is inside Kenning's own folder ({own})"
    from kenning.core.confine import is_git_name  # the parser reads PRIVATE_OVERRIDE on every command

    if any(is_git_name(part) for part in root.parts):
        return "it is inside a .git folder, which Kenning never reads"
    return None


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents
