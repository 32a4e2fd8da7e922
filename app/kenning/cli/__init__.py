"""kenning.cli

Importing the package defers a few standard-library modules (see DEFERRED): every
command's modules are imported after it, so they all start without them.
"""

from __future__ import annotations

import sys
import types

from kenning import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any


class _Deferred(types.ModuleType):
    """A standard-library module imported on first use rather than at `import`; it then
    becomes the real module, for whoever holds it.

    Not importlib.util.LazyLoader: on Python 3.11 a later `import inspect` (dataclasses
    has one) reads the lazy module's __spec__, which loads it at once; this stand-in's
    __spec__ is a plain attribute, so only a real use loads the module."""

    def __getattr__(self, name: str) -> Any:
        if sys.modules.get(self.__name__) is self:
            del sys.modules[self.__name__]
        import importlib

        real = importlib.import_module(self.__name__)
        self.__dict__.update(real.__dict__)
        return getattr(real, name)


# Imported by what every command imports, used by none of the quick ones (a lexical
# search, status): `dataclasses` imports inspect (and with it ast, dis, tokenize: ~10% of
# a `kenning status`) only to write the docstring of a dataclass that has none (the quick
# commands' have one); pathlib's urllib.parse imports ipaddress (~4%) only to check a
# bracketed host name; logging imports traceback (with linecache, tokenize, textwrap)
# for a traceback it may never print; shutil tries bz2 and lzma (with their libraries)
# for archives; the completion scripts' shlex.  Whatever does use them (another command,
# an error's traceback, the MCP SDK, numpy) gets the real module on its first attribute.
DEFERRED = ("inspect", "ipaddress", "traceback", "bz2", "lzma", "shlex")


def _defer() -> None:
    for name in DEFERRED:
        if name not in sys.modules:
            sys.modules[name] = _Deferred(name)


_defer()
