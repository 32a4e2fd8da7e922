"""core.records.Record: the standard library's dataclass, generated on first use (issue #27)."""

from __future__ import annotations

import copy
import dataclasses
import os
import pickle
import subprocess
import sys
import threading

import pytest

from kenning.core import records
from kenning.core.records import Record


def _pair(frozen: bool):
    """The same class twice: a Record and a plain dataclass."""

    class Made(Record, frozen=frozen):
        """A point with a label."""

        x: int
        label: str = "p"
        tags: tuple[str, ...] = dataclasses.field(default_factory=tuple)

    @dataclasses.dataclass(frozen=frozen)
    class Plain:
        """A point with a label."""

        x: int
        label: str = "p"
        tags: tuple[str, ...] = dataclasses.field(default_factory=tuple)

    return Made, Plain


@pytest.mark.parametrize("frozen", [True, False])
def test_a_record_is_the_dataclass_it_declares(frozen):
    Made, Plain = _pair(frozen)
    assert records.is_dataclass(Made) and not dataclasses.is_dataclass(Made)  # not generated yet
    made, plain = Made(1, label="q"), Plain(1, label="q")
    assert dataclasses.is_dataclass(Made)  # the first instance generated it
    assert repr(made).replace("Made", "Plain") == repr(plain)
    assert made == Made(1, "q") and made != Made(2, "q") and made != plain
    assert [f.name for f in dataclasses.fields(made)] == [f.name for f in dataclasses.fields(plain)]
    assert dataclasses.replace(made, x=5).x == 5 and dataclasses.asdict(made) == dataclasses.asdict(plain)
    assert (Made.__hash__ is None) == (Plain.__hash__ is None)
    if frozen:
        assert hash(made) == hash(Made(1, "q"))
        with pytest.raises(dataclasses.FrozenInstanceError):
            made.x = 3  # type: ignore[misc]
    with pytest.raises(TypeError):
        Made()  # type: ignore[call-arg]


def test_fields_of_a_record_class_not_used_yet():
    Made, Plain = _pair(True)
    assert [f.name for f in records.fields(Made)] == ["x", "label", "tags"]


@pytest.mark.parametrize("make", [copy.copy, copy.deepcopy])
def test_a_copy_is_a_finished_dataclass(make):
    Made, _ = _pair(True)
    made = Made(1)
    assert make(made) == made and repr(make(made)) == repr(made)


def test_an_instance_unpickled_where_its_class_was_never_used_is_finished():
    """An unpickled instance is made without __init__ (a worker process's answer)."""
    from kenning.core.types import ChunkDraft

    sent = pickle.dumps(ChunkDraft(ord=0, title="t", kind="prose", text="body", line_start=1, line_end=2))
    code = (
        "import pickle, sys, dataclasses\n"
        "from kenning.core.types import ChunkDraft\n"
        "assert not dataclasses.is_dataclass(ChunkDraft)\n"
        "got = pickle.loads(sys.stdin.buffer.read())\n"
        "print(repr(got), got == ChunkDraft(ord=0, title='t', kind='prose', text='body', line_start=1, line_end=2), hash(got) == hash(got))\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run([sys.executable, "-c", code], input=sent, capture_output=True, env=env, check=True)
    assert done.stdout.decode().split()[-2:] == ["True", "True"]
    assert done.stdout.decode().startswith("ChunkDraft(ord=0, title='t', kind='prose', text='body'")


def test_threads_making_the_first_instances_at_once_all_get_one_finished_class():
    Made, _ = _pair(True)
    start = threading.Barrier(8)
    got: list[object] = []

    def first() -> None:
        start.wait()
        got.append(Made(len(got)))

    threads = [threading.Thread(target=first) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(got) == 8 and all(type(obj) is Made and "Made(x=" in repr(obj) for obj in got)


def test_a_record_with_a_base_or_its_own_init_is_refused():
    class Base:
        pass

    with pytest.raises(TypeError):

        class WithBase(Base, Record):  # type: ignore[misc]
            x: int

    with pytest.raises(TypeError):

        class OwnInit(Record):
            x: int

            def __init__(self) -> None:
                pass


def test_a_records_methods_are_those_the_standard_dataclass_compiles():
    """Compiled by the cache as `dataclasses` compiles them: no __future__ of records'."""
    Made, Plain = _pair(frozen=True)
    Made(1), Plain(1)
    for name in ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__"):
        made, plain = getattr(Made, name), getattr(Plain, name)
        assert made.__code__.co_code == plain.__code__.co_code, name
        assert made.__annotations__ == plain.__annotations__, name
        assert made.__code__.co_flags == plain.__code__.co_flags, name
        assert made.__globals__ is plain.__globals__, name
    assert "exec" not in vars(dataclasses)  # served only while a Record is finished


_FIRST_USE = (
    "import sys\n"
    "from kenning.core import records\n"
    "from kenning.core.types import Hit, Source\n"
    "records.finish(Hit); records.finish(Source)\n"
    "print(len(records._COMPILED.new), len(records._COMPILED.known))\n"
)


def _first_use(tmp_path, **env_extra: str) -> tuple[int, int]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), PYTHONPYCACHEPREFIX=str(tmp_path / "pyc"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(env_extra)
    done = subprocess.run([sys.executable, "-c", _FIRST_USE], capture_output=True, text=True, env=env, check=True)
    new, known = done.stdout.split()
    return int(new), int(known)


def _methods_file(tmp_path):
    found = list((tmp_path / "pyc").rglob("records.*.methods"))
    assert len(found) <= 1
    return found[0] if found else None


def test_a_later_process_finishes_records_without_compiling_their_methods(tmp_path):
    compiled, known = _first_use(tmp_path)
    assert compiled >= 8 and known == 0  # Hit and Source: at least __init__, __repr__, __eq__, __hash__ each
    assert _methods_file(tmp_path) is not None  # beside records' bytecode, in the pycache prefix
    assert _first_use(tmp_path) == (0, compiled)  # every method text was read, none compiled


def test_no_methods_file_is_written_where_bytecode_is_not(tmp_path):
    assert _first_use(tmp_path, PYTHONDONTWRITEBYTECODE="1") == (0, 0)  # nothing kept, nothing read
    assert _methods_file(tmp_path) is None


def test_a_damaged_methods_file_is_only_a_miss(tmp_path):
    compiled, _ = _first_use(tmp_path)
    cached = _methods_file(tmp_path)
    for damage in (b"", b"\x00garbage", cached.read_bytes()[:100]):
        cached.write_bytes(damage)
        assert _first_use(tmp_path) == (compiled, 0)  # compiled again, and the file written whole again
        assert _first_use(tmp_path) == (0, compiled)
