"""kenning.serve — one warm Kenning per user and store (`kenning serve`).

The service holds the open store, the loaded model, the watcher and the search
engines once, and answers the CLI, `kenning mcp` and the app over a Unix domain
socket only its user can reach (docs/architecture.md §11).  Which requests it
answers is given to it by whoever starts it (the CLI or the launcher): this package
knows the socket, the protocol and the warm state, not the commands.

address, protocol, peer and client use the standard library only: a `kenning search`
that finds a service imports them and nothing else of Kenning.
"""

DEFAULT_IDLE_MINUTES = 30.0  # a service with no request for this long stops (`kenning serve --idle`)
