"""The desktop app (PySide6). The only package that imports Qt."""

from kenning.gui._compat import make_singletons_immortal

make_singletons_immortal()
