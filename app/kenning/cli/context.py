"""What every command needs: a Workspace for the --store and --model it was given."""

from __future__ import annotations

import argparse
import sys

from kenning.workspace import Workspace
from kenning.workspace.teamstore import chosen_store

Context = Workspace  # the name commands were written against


def say_upgrade_step(message: str) -> None:
    """Opening an older store converts it once (a large one takes minutes): each step is said."""
    print(f"kenning: {message}", file=sys.stderr, flush=True)


def workspace_for(args: argparse.Namespace) -> Workspace:
    """--store, else KENNING_STORE, else the user's own store file (workspace.teamstore)."""
    return Workspace(chosen_store(args.store), model=args.model, on_upgrade=say_upgrade_step)
