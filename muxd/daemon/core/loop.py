"""The one place that chooses the event loop: uvloop when it is installed, asyncio otherwise."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run(main: Coroutine[Any, Any, T]) -> T:
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop is a dependency, but not on every platform
        return asyncio.run(main)
    return uvloop.run(main)
