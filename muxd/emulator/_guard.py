"""Screen event handlers that cannot raise: pyte resets its parser when a handler raises."""

from __future__ import annotations

import functools
import logging
from typing import Any, Callable, TypeVar

log = logging.getLogger("muxd.emulator")

_Method = TypeVar("_Method", bound=Callable[..., Any])


# Events still handled inside a DCS/SOS/PM/APC string (everything else is swallowed).
STRING_EVENTS = frozenset({"start_string", "end_string"})


def never_raises(method: _Method) -> _Method:
    """Wrap a screen event handler so a bad sequence (wrong arity, odd value) is ignored,
    and so that nothing but the string terminator acts inside a control string."""
    honoured_in_string = method.__name__ in STRING_EVENTS

    @functools.wraps(method)
    def guarded(self: Any, *args: Any, **kwargs: Any) -> Any:
        if self.in_string and not honoured_in_string:
            return None
        try:
            return method(self, *args, **kwargs)
        except Exception:
            self.hook_errors += 1
            log.debug("%s%r ignored", method.__name__, args, exc_info=True)
            return None

    return guarded  # type: ignore[return-value]


def guard_events(cls: type, events: frozenset[str]) -> type:
    """Class decorator body: wrap every pyte event handler of `cls` with `never_raises`."""
    for name in events:
        method = getattr(cls, name, None)
        if callable(method) and not getattr(method, "__wrapped__", None):
            setattr(cls, name, never_raises(method))
    return cls
