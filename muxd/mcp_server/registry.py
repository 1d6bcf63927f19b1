"""Where tools are registered: each declares its category and risk, and gets the guards.

`ToolRegistry.tool(...)` replaces `MCPServer.tool(...)` for muxd's tools, so no tool can be
added without a risk and without the guards of `guards.py`. What a tool publishes is settled
here too (tool_publication.py): arguments refused when unknown, lean schemas, the category.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

from muxd.mcp_server.guards import ToolGuard
from muxd.mcp_server.tool_categories import CATEGORIES
from muxd.mcp_server.tool_publication import publish

Risk = Literal["safe", "moderate", "dangerous"]
RISKS: tuple[Risk, ...] = ("safe", "moderate", "dangerous")
UNKNOWN_RISK: Risk = "dangerous"  # a tool nobody classified is treated as the worst case

F = TypeVar("F", bound=Callable[..., Awaitable[Any]])


@dataclass(frozen=True)
class ToolSpec:
    name: str
    category: str
    risk: Risk
    description: str


class ToolRegistry:
    """muxd's tools on one MCPServer: their specs, and the guard wrapped around each.

    `categories` limits the tools served to those categories (`muxd mcp --tools`); None serves all.
    """

    def __init__(self, server: MCPServer[Any], guard: ToolGuard, categories: Iterable[str] | None = None) -> None:
        self.server = server
        self.guard = guard
        self.specs: dict[str, ToolSpec] = {}
        self.categories = frozenset(CATEGORIES if categories is None else categories)
        self.input_schemas: dict[str, dict[str, Any]] = {}  # as published, for list_tools(include_schema=true)

    def tool(self, *, category: str, risk: Risk,
             annotations: ToolAnnotations | None = None) -> Callable[[F], F]:
        """Register the decorated coroutine as a guarded MCP tool named after it."""
        if risk not in RISKS:
            raise ValueError(f"unknown risk {risk!r}")
        if category not in CATEGORIES:
            raise ValueError(f"unknown category {category!r} (tool_categories.CATEGORIES)")

        def decorator(fn: F) -> F:
            if category not in self.categories:
                return fn  # not served by this `muxd mcp --tools …`
            name = fn.__name__
            description = inspect.cleandoc(fn.__doc__ or "")
            self.specs[name] = ToolSpec(name, category, risk, description)
            self.guard.register(name, category=category, risk=risk)  # its metrics, at zero, from now on
            # Read-only tools (annotated so) are views a view_only token may use; see daemon/access/tiers.py.
            read_only = bool(annotations is not None and annotations.read_only_hint)
            self.server.add_tool(self.guard.wrap(name, fn, risk=risk, read_only=read_only), name=name,
                                 description=description, annotations=annotations)
            self.input_schemas[name] = publish(self.server, name, category)
            return fn

        return decorator

    def risk_of(self, name: str) -> Risk:
        """The declared risk of a tool; unknown tools are dangerous."""
        spec = self.specs.get(name)
        return spec.risk if spec is not None else UNKNOWN_RISK
