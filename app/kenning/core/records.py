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
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

T = TypeVar("T")

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform  # typing's from Python 3.11
else:

    def dataclass_transform(**_: Any) -> Callable[[T], T]:
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


def finish(cls: type[T]) -> type[T]:
    """The class as `dataclasses.dataclass` makes it (made now, if it is not yet)."""
    if _OPTIONS in cls.__dict__:
        with _LOCK:
            options = cls.__dict__.get(_OPTIONS)
            if options is not None:
                dataclasses.dataclass(cls, **options)  # finishes this very class (no slots)
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
