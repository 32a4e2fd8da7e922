"""Kenning's dataclasses: the standard library's, made when the class is first used.

`class Hit(Record):` (or `class Source(Record, frozen=True):`) is the class that
`@dataclasses.dataclass` (with the same options) makes, but its methods are generated
on its first instance instead of at import.  Generating them costs 0.5-1 ms a class
on Python 3.11 (six methods, each compiled with `exec`), and a module defines many a
command never makes: a lexical search imported 55 dataclasses and made 28 (issue #27;
Python 3.13 compiles a class's methods at once).

Until then `Record.__init__` (a call) and `Record.__setstate__` (a copy, an unpickled
instance) finish the class first, so every instance is one of the finished dataclass,
whose own `__init__` then shadows Record's.  A thread that calls the class while another
finishes it waits for it.  Ask this module's `fields` and `is_dataclass` about a class
itself; for an instance the standard ones answer.

Most of the cost of generating a class is compiling the source text `dataclasses` writes
for each method (~0.15 ms each): while it finishes a Record, the `exec` it calls takes
that code from `_Compiled`, a cache of each text's code object beside this module's
bytecode (one file per Python version), so a later process only unmarshals it (~0.01 ms).
The text is the key, so a hit is exactly what compiling it again would give.
"""

from __future__ import annotations

import builtins
import dataclasses
import marshal
import os
import sys
import threading
from collections.abc import Callable

from kenning import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, ClassVar, TypeVar

    from typing_extensions import dataclass_transform  # typing's from Python 3.11

    T = TypeVar("T")
else:

    def dataclass_transform(**_: object) -> Callable[[type], type]:
        return lambda cls: cls  # it only tells type checkers


_OPTIONS = "__kenning_record__"  # the dataclass options of a class not finished yet
_LOCK = threading.RLock()


@dataclass_transform(field_specifiers=(dataclasses.field,))
class Record:
    """The base of a dataclass generated on first use (see the module)."""

    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]  # each finished class's own

    def __init_subclass__(cls, *, frozen: bool = False, eq: bool = True, repr: bool = True) -> None:
        super().__init_subclass__()
        if (
            cls.__bases__ != (Record,)
            or {"__slots__", "__init__", "__getstate__", "__setstate__"} & cls.__dict__.keys()
        ):
            raise TypeError(f"{cls.__qualname__}: a Record has no other base, slots, __init__ or state of its own")
        setattr(cls, _OPTIONS, {"frozen": frozen, "eq": eq, "repr": repr})

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        cls = finish(type(self))
        cls.__init__(self, *args, **kwargs)  # the dataclass's own

    def __setstate__(self, state: dict[str, Any]) -> None:
        finish(type(self))
        self.__dict__.update(state)  # what copy and pickle do for a dataclass


class _Compiled:
    """The code objects of the method texts `dataclasses` generates, kept between processes.

    The file (`records.<python>.methods` beside records' own bytecode, so wherever Python
    keeps it, with the same rights) maps each text to its marshalled code, under the
    interpreter's exact version (marshal's format is its own); it is rewritten at exit when this process compiled
    a text it lacked, unless bytecode is not written at all.  Anything unreadable is a miss.
    """

    LIMIT = 4000  # texts kept; beyond it (classes changed many times) the file starts again

    def __init__(self, bytecode: str | None) -> None:
        self.path = None if not bytecode else bytecode.rpartition(".")[0] + ".methods"
        self.known: dict[str, bytes] | None = None  # read on first use
        self.new: dict[str, bytes] = {}

    def exec(self, source: Any, globals: Any = None, locals: Any = None, /) -> None:
        """builtins.exec, for `dataclasses`: a text is run from its cached code."""
        if isinstance(source, str):
            source = self.code(source)
        # a missing globals is the caller's, which this call would otherwise make records'
        builtins.exec(source, vars(dataclasses) if globals is None else globals, locals)

    def code(self, source: str) -> Any:
        if self.known is None:
            self.known = self._read()
        blob = self.known.get(source)
        if blob is not None:
            try:
                return marshal.loads(blob)
            except (EOFError, ValueError, TypeError):
                pass
        # dont_inherit: compiled as exec compiles it in dataclasses, without this module's __future__
        code = compile(source, "<string>", "exec", dont_inherit=True)
        if self.path and not sys.dont_write_bytecode:
            if not self.new:
                import atexit

                atexit.register(self.save)
            self.new[source] = marshal.dumps(code)
        return code

    def _read(self) -> dict[str, bytes]:
        if not self.path:
            return {}
        try:
            with open(self.path, "rb") as file:
                # loads of the whole file: load(file) reads each object with a call of
                # the file's own (~6 M instructions for 500 texts, 1.4 M this way)
                made_by, known = marshal.loads(file.read())
        except (OSError, EOFError, ValueError, TypeError):
            return {}
        ok = made_by == sys.version and isinstance(known, dict)
        return {k: v for k, v in known.items() if isinstance(k, str) and isinstance(v, bytes)} if ok else {}

    def save(self) -> None:
        if not self.new or not self.path:
            return
        with _LOCK:
            known = self._read()  # another process may have added texts meanwhile
            if len(known) + len(self.new) > self.LIMIT:
                known = {}
            known.update(self.new)
            self.new = {}
            partial = f"{self.path}.{os.getpid()}.tmp"
            try:
                os.makedirs(os.path.dirname(self.path), exist_ok=True)
                with open(partial, "wb") as file:
                    marshal.dump((sys.version, known), file)
                os.replace(partial, self.path)
            except OSError:  # a folder this user may not write, as for bytecode
                try:
                    os.unlink(partial)
                except OSError:
                    pass


_COMPILED = _Compiled(globals().get("__cached__"))


def finish(cls: type[T]) -> type[T]:
    """The class as `dataclasses.dataclass` makes it (made now, if it is not yet)."""
    if _OPTIONS in cls.__dict__:
        with _LOCK:
            options = cls.__dict__.get(_OPTIONS)
            if options is not None:
                # dataclasses calls the global `exec` with each method's text: for as long
                # as it runs here, that name is _COMPILED's (the same result, compiled once)
                names = vars(dataclasses)
                served = "exec" not in names  # not already (a class finished while finishing one)
                if served:
                    names["exec"] = _COMPILED.exec
                try:
                    dataclasses.dataclass(cls, **options)  # finishes this very class (no slots)
                finally:
                    if served:
                        del names["exec"]
                delattr(cls, _OPTIONS)
    return cls


def fields(cls_or_instance: Any) -> tuple[dataclasses.Field[Any], ...]:
    """dataclasses.fields, for a Record class not used yet too."""
    if isinstance(cls_or_instance, type):
        finish(cls_or_instance)
    return dataclasses.fields(cls_or_instance)


def is_dataclass(obj: Any) -> bool:
    """dataclasses.is_dataclass, for a Record class not used yet too."""
    cls = obj if isinstance(obj, type) else type(obj)
    return _OPTIONS in cls.__dict__ or dataclasses.is_dataclass(cls)
