"""Running extractors in a child process that a hostile file can hang or bloat alone.

One long-lived child serves requests (a JSON line naming the kind and the size, then
the file's bytes, over its stdin; one JSON line back on its stdout), so the cost
of starting Python and loading PDFium is paid once per index run, not per file.  The
parent waits at most `time_limit` seconds for an answer, then kills the child and
starts a fresh one for the next file.  On POSIX the child caps its own address space
(`memory_limit` above what it uses at start), so a decompression bomb ends in a
MemoryError inside the child instead of swapping the machine.

The child is a plain `python` subprocess rather than a multiprocessing one because
the app's indexer itself runs in a daemonic multiprocessing child, which may not
have children of its own.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any

from kenning.ingest.extract.model import MEMORY_LIMIT_BYTES, TIME_LIMIT_S, Extracted, Extraction

_CHILD_CODE = "import sys; from kenning.ingest.extract.worker import serve; serve(int(sys.argv[1]))"


class ExtractionWorker:
    """A restartable child process that extracts one file per request."""

    def __init__(self, time_limit: float = TIME_LIMIT_S, memory_limit: int = MEMORY_LIMIT_BYTES) -> None:
        self.time_limit = time_limit
        self.memory_limit = memory_limit
        self._proc: subprocess.Popen[bytes] | None = None
        self._replies: queue.Queue[Any] = queue.Queue()
        self._lock = threading.Lock()

    def extract(self, raw: bytes, kind: str, max_bytes: int, name: str = "") -> Extraction:
        """Extract `raw` (a file's bytes: the child never opens a path of its own; `name`
        is the file's name, for titles only)."""
        request = json.dumps({"kind": kind, "max_bytes": max_bytes, "size": len(raw), "name": name}) + "\n"
        with self._lock:
            try:
                stdin = self._ensure_started().stdin
                assert stdin is not None  # started with stdin=PIPE
                stdin.write(request.encode("utf-8"))
                stdin.write(raw)
                stdin.flush()
            except OSError as exc:
                self._stop()
                return Extraction(skip_reason="extract-failed", detail=f"the extraction worker is unavailable ({exc})")
            try:
                reply = self._replies.get(timeout=self.time_limit)
            except queue.Empty:
                self._stop()
                return Extraction(skip_reason="timeout", detail=f"extraction took longer than {self.time_limit:g} s")
            if reply is None:  # the child died: a crash in a parser, or the OS killed it
                code = self._stop()
                return Extraction(skip_reason="extract-failed", detail=f"the extractor crashed (exit code {code})")
            result = _decode_reply(reply)
            if result.skip_reason == "too-large" and "memory" in result.detail:
                self._stop()  # a heap that hit its cap stays fragmented: start the next file afresh
            return result

    def close(self) -> None:
        with self._lock:
            self._stop()

    def _ensure_started(self) -> subprocess.Popen[bytes]:
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        self._stop()
        env = dict(os.environ)
        # The child finds kenning (and its libraries) exactly where the parent did.
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        package_parent = str(Path(__file__).resolve().parents[3])
        if getattr(sys, "frozen", False):  # the bundle's executable serves as the worker (packaging/launcher.py)
            command = [sys.executable, "--kenning-extract-worker", str(self.memory_limit)]
        else:
            command = [sys.executable, "-c", _CHILD_CODE, str(self.memory_limit)]
        self._proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,  # parsers' warnings about broken files are noise
            cwd=package_parent,  # never a folder being indexed: it would be on the child's path
            env=env,
            creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0),  # Windows: no console flashing up
        )
        self._replies = queue.Queue()
        threading.Thread(target=_pump, args=(self._proc.stdout, self._replies), daemon=True).start()
        return self._proc

    def _stop(self) -> int | None:
        proc, self._proc = self._proc, None
        if proc is None:
            return None
        if proc.poll() is None:
            proc.kill()
        try:
            code = proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
        for stream in (proc.stdin, proc.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        return code


def _pump(stream: IO[bytes], replies: queue.Queue[Any]) -> None:
    """Move the child's reply lines onto a queue the parent can wait on with a timeout."""
    try:
        for line in stream:
            replies.put(line)
    except (OSError, ValueError):
        pass
    replies.put(None)


def _decode_reply(line: bytes) -> Extraction:
    try:
        data = json.loads(line)
        documents = tuple(Extracted.from_json(d) for d in data.get("documents", ()))
        return Extraction(documents, data.get("skip_reason"), str(data.get("detail", "")))
    except (ValueError, KeyError, TypeError) as exc:
        return Extraction(skip_reason="extract-failed", detail=f"unreadable reply from the extractor ({exc})")


# ---------------------------------------------------------------- the child side


def serve(memory_limit: int) -> None:
    """The child's loop: one JSON request per line in, one JSON reply per line out."""
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # a library printing to stdout must not corrupt the replies
    _limit_memory(memory_limit)
    from kenning.ingest.extract import extract_in_process

    requests = sys.stdin.buffer
    for line in requests:
        request = json.loads(line)
        raw = _read_exactly(requests, int(request["size"]))
        if raw is None:
            return  # the parent went away mid-request
        result = extract_in_process(raw, request["kind"], int(request["max_bytes"]), str(request.get("name", "")))
        del raw
        reply = {
            "documents": [d.to_json() for d in result.documents],
            "skip_reason": result.skip_reason,
            "detail": result.detail,
        }
        replies.write(json.dumps(reply, ensure_ascii=True).encode("ascii") + b"\n")
        replies.flush()


def _read_exactly(stream: IO[bytes], size: int) -> bytes | None:
    data = bytearray()
    while len(data) < size:
        block = stream.read(size - len(data))
        if not block:
            return None
        data += block
    return bytes(data)


def _limit_memory(extra: int) -> None:
    try:
        import resource
    except ImportError:  # Windows: the time limit still applies
        return
    try:
        with open("/proc/self/statm") as statm:
            in_use = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        in_use = 0
    try:
        resource.setrlimit(resource.RLIMIT_AS, (in_use + extra, in_use + extra))
    except (ValueError, OSError):  # macOS ignores or refuses RLIMIT_AS; nothing to do
        pass
