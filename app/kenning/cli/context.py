"""What every command needs: a Workspace for the --store and --model it was given."""

from __future__ import annotations

from pathlib import Path

from kenning.workspace import Workspace

Context = Workspace  # the name commands were written against


def workspace_for(args) -> Workspace:
    return Workspace(Path(args.store) if args.store else None, model=args.model)
