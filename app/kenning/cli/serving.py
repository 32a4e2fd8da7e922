"""`kenning serve`: run the service for a store, ask whether one runs, stop it.

The service is composed here, once, for every host: the CLI runs it in its own
process (`kenning serve`, the systemd unit), the app runs one inside its window
(through the launcher, which hands it `handlers_for`).  See docs/architecture.md §11.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from kenning.serve import client
from kenning.serve.server import Service, running_pid
from kenning.workspace import default_store_path

DETACH_WAIT_SECONDS = 120.0  # a large store being upgraded on first open takes minutes


def store_path_of(args: Any) -> Path:
    return Path(os.path.abspath(args.store)) if args.store else default_store_path()


def cmd_serve(args: Any) -> int:
    store = store_path_of(args)
    if args.status:
        return _status(store)
    if args.stop:
        return _stop(store)
    if args.detach:
        return _detach(args, store)
    return run_service(
        store,
        idle_minutes=args.idle,
        watch=not args.no_watch,
        http=args.http,
        model=args.model,
    )


def handlers_for(warm: Any) -> dict[str, Any]:
    """The ops a service answers over this warm state: the CLI's commands and MCP sessions."""
    from kenning.cli import served
    from kenning.cli.output import hit_dict
    from kenning.mcpserver.transport import socket_handler

    return {"cli": served.handler(warm), "mcp": socket_handler(warm, hit_dict)}


def run_service(
    store: Path, *, idle_minutes: float, watch: bool, http: str | None = None, model: str | None = None
) -> int:
    """The service in this process, until stopped (Ctrl+C, SIGTERM, --stop) or idle."""
    from kenning.cli.context import say_upgrade_step
    from kenning.serve import streams
    from kenning.serve.warm import Warm

    endpoint = None
    if http:
        from kenning.mcpserver.transport import parse_endpoint

        endpoint = parse_endpoint(http)  # a non-loopback host is refused before anything starts
    idle = None if http or idle_minutes <= 0 else idle_minutes * 60  # an HTTP endpoint waits for its clients
    service = Service(store, {}, idle_seconds=idle)
    service.start()  # the lock first: a second service stops here, before loading anything
    warm = None
    server = None
    try:
        warm = Warm(store, watch=watch, environ=_environment(model), on_upgrade=say_upgrade_step).start()
        service.handlers.update(handlers_for(warm))
        service.describe = warm.describe
        if endpoint is not None:
            from kenning.cli.output import hit_dict
            from kenning.mcpserver.transport import start_http

            server = start_http(warm, endpoint, hit_dict)
            warm.http_url = server.url
        streams.install()
        _say_started(service, warm, idle)
        previous = signal.signal(signal.SIGTERM, lambda *_: service.stop())
        try:
            service.serve()
        except KeyboardInterrupt:
            pass
        finally:
            signal.signal(signal.SIGTERM, previous)
    finally:
        service.close()
        if server is not None:
            server.stop()
        if warm is not None:
            warm.close()
    print("kenning: the service stopped.", file=sys.stderr)
    return 0


def _environment(model: str | None) -> dict[str, str]:
    env = dict(os.environ)
    if model:
        env["KENNING_MODEL"] = model  # --model for the service: what its settings say
    return env


def _say_started(service: Service, warm: Any, idle: float | None) -> None:
    until = "until stopped" if idle is None else f"until {idle / 60:g} minutes pass without a request"
    lines = [
        f"kenning: serving {service.address.store_path} (pid {os.getpid()}), {until}.",
        f"kenning: model {warm.model_name}; {'watching the sources' if warm.watch else 'not watching the sources'}.",
    ]
    if getattr(warm, "http_url", None):
        lines.append(f"kenning: MCP over HTTP at {warm.http_url} (token: `kenning mcp --print-config http`).")
    lines.append("kenning: `kenning serve --stop` or Ctrl+C stops it.")
    print("\n".join(lines), file=sys.stderr, flush=True)


def _status(store: Path) -> int:
    answer = client.ask(str(store), {"op": "ping"})
    if not answer or not answer.get("ok"):
        pid = running_pid(str(store))
        if pid:
            print(f"A Kenning service (pid {pid}) holds {store} but does not answer.")
            return 1
        print(f"No Kenning service runs for {store}; `kenning serve` starts one.")
        return 3
    idle = answer.get("idle_timeout")
    print(f"Kenning service for {answer.get('store')}: pid {answer.get('pid')}, Kenning {answer.get('version')}")
    print(f"  model {answer.get('model')} ({answer.get('model_state')})")
    print("  watching the sources for changes" if answer.get("watching") else "  not watching the sources")
    print(f"  stops after {idle / 60:g} minutes idle" if idle else "  runs until stopped")
    if answer.get("http"):
        print(f"  MCP over HTTP at {answer.get('http')}")
    return 0


def _stop(store: Path) -> int:
    answer = client.ask(str(store), {"op": "stop"})
    if not answer or not answer.get("ok"):
        print(f"No Kenning service runs for {store}.")
        return 3
    deadline = time.monotonic() + 15
    while running_pid(str(store)) and time.monotonic() < deadline:
        time.sleep(0.05)
    print(f"Stopped the Kenning service (pid {answer.get('pid')}) for {store}.")
    return 0


def _detach(args: Any, store: Path) -> int:
    """Start `kenning serve` in its own session, wait until it answers, then return."""
    import subprocess
    import tempfile

    if running_pid(str(store)):
        return _status(store)
    command = [sys.executable, "-m", "kenning.launcher", "--store", str(store)]
    if args.model:
        command += ["--model", args.model]
    command += ["serve", "--idle", f"{args.idle:g}"]
    if args.no_watch:
        command.append("--no-watch")
    if args.http:
        command += ["--http", args.http]
    # Its stderr goes to a file nobody reads once it answers (its log has the rest); a
    # pipe would break its last words when this command exits.
    with open(os.devnull, "rb") as null_in, open(os.devnull, "wb") as null_out, tempfile.TemporaryFile() as errors:
        child = subprocess.Popen(
            command, stdin=null_in, stdout=null_out, stderr=errors, start_new_session=True, close_fds=True
        )
        deadline = time.monotonic() + DETACH_WAIT_SECONDS
        while time.monotonic() < deadline:
            if child.poll() is not None:
                errors.seek(0)
                problem = errors.read().decode("utf-8", "replace").strip()
                print(problem or f"kenning: the service exited at once (code {child.returncode}).", file=sys.stderr)
                return 1
            answer = client.ask(str(store), {"op": "ping"})
            if answer and answer.get("ok"):
                print(
                    f"Started a Kenning service (pid {answer.get('pid')}) for {store}; `kenning serve --stop` stops it."
                )
                return 0
            time.sleep(0.1)
    print("kenning: the service did not answer in time; see the log (`kenning status`).", file=sys.stderr)
    return 1
