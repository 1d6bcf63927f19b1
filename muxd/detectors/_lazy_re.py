"""Patterns compiled at their first use, not when their detector's module is imported.

A daemon looks up every detector at a pane's first look (registry.py), and compiling the ~200
patterns of all of them cost that look ~30 ms of CPU, though a pane runs one agent (or none: a
shell) and only its detector's patterns are ever tried. `lazy_compile` gives what `re.compile`
would, compiled when one of its attributes (search, match, pattern…) is first read; those are then
the compiled pattern's own, so a use costs what it did. tests/test_detector_patterns.py compiles
every one, so a bad pattern still fails a test rather than a pane's look.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # typing only for the type checker: see cli/table.py
if TYPE_CHECKING:
    from typing import Any, AnyStr

# What a pattern's users read of it: copied onto the stand-in once compiled.
_ATTRIBUTES = tuple(name for name in dir(re.Pattern) if not name.startswith("_"))
# Every stand-in made, for the test that compiles them all.
MADE: list[LazyPattern] = []


class LazyPattern:
    """re.compile(pattern, flags), done at the first read of any of its attributes."""

    def __init__(self, pattern: str | bytes, flags: int = 0) -> None:
        self._source = (pattern, flags)

    def __getattr__(self, name: str) -> Any:
        if name == "_source":  # not made by __init__ (a copy being built): nothing to compile
            raise AttributeError(name)
        compiled = re.compile(*self._source)
        self.__dict__.update((attribute, getattr(compiled, attribute)) for attribute in _ATTRIBUTES)
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"lazy_compile({self._source[0]!r})"


def lazy_compile(pattern: AnyStr, flags: int = 0) -> re.Pattern[AnyStr]:
    """A stand-in for re.compile(pattern, flags), compiled at its first use."""
    made = LazyPattern(pattern, flags)
    MADE.append(made)
    return made  # type: ignore[return-value]  # it reads as the pattern it stands for
