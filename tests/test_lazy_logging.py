"""Kenning's loggers import `logging` on the first record kept (core.logger, issue #27).

Each case runs in a fresh interpreter, as a command starts: there `logging` is not
imported yet (here pytest has imported it, which is the other half of the rule).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest


def _run(code: str, home) -> list[str]:
    env = dict(os.environ, KENNING_HOME=str(home), PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_a_record_below_the_level_imports_nothing_and_the_first_kept_one_reaches_the_file(tmp_path):
    lines = _run(
        """
        import sys
        from kenning.core.logger import get_logger
        from kenning.workspace import logs
        log = get_logger("kenning.here")
        logs.start_logging()
        log.debug("dropped %s", "quietly")
        print("after debug", "logging" in sys.modules)
        def named_caller():
            log.info("kept %s", "this one")
        named_caller()
        print("after info", "logging" in sys.modules)
        import logging
        for handler in logging.getLogger("kenning").handlers:
            handler.flush()
        print("file", logs.log_file())
        """,
        tmp_path,
    )
    assert lines[:2] == ["after debug False", "after info True"]
    text = (tmp_path / "logs" / "kenning.log").read_text(encoding="utf-8")
    assert "INFO kenning.here: kept this one" in text and "dropped" not in text
    assert lines[2] == f"file {tmp_path / 'logs' / 'kenning.log'}"


def test_the_record_names_its_callers_line_not_the_stand_in(tmp_path):
    lines = _run(
        """
        import logging
        from kenning.core.logger import get_logger
        seen = []
        class Keep(logging.Handler):
            def emit(self, record):
                seen.append((record.funcName, record.filename))
        logging.getLogger("kenning.t").addHandler(Keep())
        logging.getLogger("kenning.t").setLevel(logging.DEBUG)
        def caller():
            get_logger("kenning.t").warning("w")
            get_logger("kenning.t").exception("e", exc_info=False)
        caller()
        print(seen)
        """,
        tmp_path,
    )
    assert lines == ["[('caller', '<string>'), ('caller', '<string>')]"]


@pytest.mark.parametrize("verbose", [False, True])
def test_once_logging_is_loaded_its_own_levels_decide(tmp_path, verbose):
    """A debug record is dropped unloaded only when logging would drop it: loaded (here
    by a library first), Kenning's logger at DEBUG keeps it."""
    lines = _run(
        f"""
        import logging, sys
        from kenning.core.logger import get_logger
        from kenning.workspace import logs
        logs.start_logging(verbose={verbose})
        logging.getLogger("kenning").setLevel(logging.DEBUG)
        kept = []
        class Keep(logging.Handler):
            def emit(self, record):
                kept.append(record.getMessage())
        logging.getLogger("kenning").addHandler(Keep())
        get_logger("kenning.x").debug("seen")
        print(kept, bool(logs._handlers))
        """,
        tmp_path,
    )
    assert lines == ["['seen'] True"]


def test_logging_configured_later_still_gets_the_handlers_start_logging_asked_for(tmp_path):
    """start_logging before logging is imported: the handlers are made by the first
    record, whoever imported logging in between."""
    lines = _run(
        """
        from kenning.workspace import logs
        logs.start_logging(console=True)
        import logging  # a library imports it; no Kenning record yet
        from kenning.core.logger import get_logger
        get_logger("kenning.y").warning("to the console")
        print(sorted(logs._handlers))
        """,
        tmp_path,
    )
    assert lines == ["['console', 'file']"]
