"""The CLI's commands answered inside the service, byte for byte as in the client's process.

The service runs the very same `main()` for the client's arguments; what differs is
where the command's Workspace comes from (ServedSession): the service's open store,
its loaded model and its kept engines instead of a store opened and a model loaded
for one command.  The output is captured per thread (serve.streams) with the client's
terminal flags and environment, so colours, notes and errors come out as they would
have in the client's own process.  The one difference is on stderr: a command the
service answers never loads the model, so it never says how long that took.

The service declines (the client then runs the command itself) a command it does not
serve, another Kenning version, another store or KENNING_HOME, another model than its
own, `--no-service`.  Requests run one at a time: the client's environment is applied
to the process for the duration.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kenning import __version__
from kenning.core.logger import get_logger
from kenning.serve import protocol
from kenning.serve.client import SERVED_COMMANDS, TERMINAL_VARIABLES
from kenning.serve.streams import captured
from kenning.workspace import Workspace
from kenning.workspace.settings import ENVIRONMENT as SETTING_VARIABLES

if TYPE_CHECKING:
    from kenning.core.types import SearchResult
    from kenning.serve.server import Channel, Handler
    from kenning.serve.warm import Warm
    from kenning.workspace import Searcher
    from kenning.workspace.settings import Settings

log = get_logger(__name__)

# What a request's environment sets (or unsets) in the process while it runs.
REQUEST_VARIABLES = (*SETTING_VARIABLES.values(), *TERMINAL_VARIABLES)
_environment_lock = threading.Lock()  # one request's environment at a time


class NotServed(Exception):
    """The service leaves this command to the client's own process; the text says why."""


class ServedSearcher:
    """The service's Searcher as one command sees it: the command's own settings (its
    client's environment), no model load of its own to state, and the query vectors
    saved on the service's schedule (a write after every command would make the kept
    engines' caches start afresh: workspace.searcher)."""

    model_load_seconds = None

    def __init__(self, inner: Searcher, settings: Settings) -> None:
        self.inner = inner
        self.settings = settings

    def search(self, text: str, mode: str = "hybrid", **options: Any) -> SearchResult:
        options.setdefault("settings", self.settings)
        return self.inner.search(text, mode, **options)

    def save_query_vectors(self, *, now: bool = False) -> bool:
        return self.inner.save_query_vectors(now=False)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class ServedWorkspace(Workspace):
    """A command's Workspace over the service's store, model and Searcher."""

    def __init__(self, warm: Warm, store_path: Path, *, model: str | None) -> None:
        super().__init__(store_path, model=model, borrow=warm.workspace)
        self.warm = warm

    def searcher(self, model: Any = None, model_error: str | None = None, *, lazy_model: bool = False) -> Any:
        inner = self.warm.searcher_with_model() if lazy_model else self.warm.searcher
        return ServedSearcher(inner, self.settings)


class ServedSession:
    """How main() gets a command's Workspace inside the service (see cli.main.main)."""

    configures_logging = False  # the service's log is set up once, by the service

    def __init__(self, warm: Warm, client_store: str, client_cwd: str | None = None) -> None:
        self.warm = warm
        self.client_store = client_store
        self.client_cwd = client_cwd  # the client's folder: where its relative --store is

    def check(self, args: Any) -> None:
        if args.command not in SERVED_COMMANDS:
            raise NotServed(f"`kenning {args.command}` runs in its own process")
        if getattr(args, "no_service", False):
            raise NotServed("--no-service")
        if getattr(args, "also_store", None):
            raise NotServed("--also-store (its credentials are the client's: pg_service.conf, PGPASSFILE)")
        if args.store and self._real(args.store) != os.path.realpath(self.warm.store_path):
            raise NotServed("another store")
        model = self.workspace(args).model_name
        if model != self.warm.model_name:
            raise NotServed(f"the model {model} (the service runs {self.warm.model_name})")

    def _real(self, store: str) -> str | None:
        """The real path of --store as the client's process would open it (None: unknown)."""
        if os.path.isabs(store):
            return os.path.realpath(store)
        if self.client_cwd is None or not os.path.isabs(self.client_cwd):
            return None  # never the service's own folder: that is not where the client is
        return os.path.realpath(os.path.join(self.client_cwd, store))

    def workspace(self, args: Any) -> Workspace:
        if getattr(args, "workspace", None) is None:
            shown = Path(args.store) if args.store else Path(self.client_store)
            args.workspace = ServedWorkspace(self.warm, shown, model=args.model)
        workspace: Workspace = args.workspace
        return workspace

    def release(self, args: Any) -> None:
        args.workspace = None


def handler(warm: Warm) -> Handler:
    """The service's "cli" op over this warm state."""

    def handle(request: dict[str, Any], channel: Channel) -> None:
        channel.send(answer(request, warm))

    return handle


def answer(request: dict[str, Any], warm: Warm) -> dict[str, Any]:
    refusal = _refusal(request, warm)
    if refusal:
        return {"ok": False, "fallback": True, "error": refusal}
    tty = request.get("tty") or [False, False]
    cwd = request.get("cwd")
    session = ServedSession(warm, request["store"], cwd if isinstance(cwd, str) else None)
    with (
        warm.lock,
        _request_environment(request.get("env") or {}),
        captured((bool(tty[0]), bool(tty[1]))) as out,
        _deadline(warm, protocol.COMMAND_SECONDS) as expired,
    ):
        try:
            code = _main(request["argv"], session)
        except NotServed as why:
            log.debug("declined %s: %s", request["argv"][:2], why)
            return {"ok": False, "fallback": True, "error": str(why)}
    if expired.is_set():
        return {
            "ok": True,
            "exit": 1,
            "output": [
                [protocol.STDERR, f"kenning: the service stopped this command after {protocol.COMMAND_SECONDS:g} s.\n"]
            ],
        }
    return {"ok": True, "exit": code, "output": out.output}


def _refusal(request: dict[str, Any], warm: Warm) -> str | None:
    argv, store, env = request.get("argv"), request.get("store"), request.get("env") or {}
    if request.get("version") != __version__:
        return f"the service is Kenning {__version__}"
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        return "bad arguments"
    if not isinstance(store, str) or not isinstance(env, dict):
        return "bad request"
    if os.path.realpath(store) != os.path.realpath(warm.store_path):
        return "another store"
    if env.get("KENNING_HOME") != warm.environ.get("KENNING_HOME"):
        return "another KENNING_HOME"  # another log folder and model cache
    return None


def _main(argv: list[str], session: ServedSession) -> int:
    from kenning.cli.main import main

    try:
        return main(argv, session=session)
    except SystemExit as done:  # argparse: --help, a usage error
        if isinstance(done.code, str):
            print(done.code, file=sys.stderr)
            return 1
        return int(done.code or 0)


@contextlib.contextmanager
def _request_environment(env: Mapping[str, Any]) -> Iterator[None]:
    """The client's values for REQUEST_VARIABLES, and only those, while the command runs."""
    with _environment_lock:
        saved = {name: os.environ.get(name) for name in REQUEST_VARIABLES}
        try:
            for name in REQUEST_VARIABLES:
                value = env.get(name)
                if isinstance(value, str):
                    os.environ[name] = value
                else:
                    os.environ.pop(name, None)
            yield
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value


@contextlib.contextmanager
def _deadline(warm: Warm, seconds: float) -> Iterator[threading.Event]:
    """Interrupts the store's current statement once `seconds` have passed."""
    expired = threading.Event()

    def fire() -> None:
        expired.set()
        warm.workspace.interrupt()  # the store's statement running now raises

    timer = threading.Timer(seconds, fire)
    timer.daemon = True
    timer.start()
    try:
        yield expired
    finally:
        timer.cancel()
