"""Entry point of the frozen bundle: the same `kenning` command a pip install gives.

With no arguments it opens the desktop app, like the installed command does.
"""

import multiprocessing
import sys

from kenning.launcher import main

if __name__ == "__main__":
    # A no-op unless a library starts worker processes from the frozen executable.
    multiprocessing.freeze_support()
    if len(sys.argv) == 3 and sys.argv[1] == "--kenning-extract-worker":
        # The document extraction worker (kenning/ingest/extract/worker.py) re-runs this executable.
        from kenning.ingest.extract.worker import serve

        serve(int(sys.argv[2]))
        sys.exit(0)
    sys.exit(main())
