"""What `tools/list` costs an orchestrator's context: bytes and tokens of muxd's published list,
against the SDK's own rendering of the same tools in the same run (the peer), in all and per
`muxd mcp --tools` category.

    .venv/bin/python benchmarks/bench_tools_list.py

Tokens are bytes / 4 of the compact JSON (schema_lean.tokens_of), the rule of bench_mcp.py;
tiktoken is not a dependency. The list is the one `tools/list` answers (each tool's name,
description, inputSchema, outputSchema, annotations, _meta), built in-process: listing tools
asks nothing of the daemon. The peer is what the SDK publishes for the same functions unaided
(`Tool.from_function`): derived titles, `anyOf` for every optional value, every annotation hint.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

from mcp.server.mcpserver.tools.base import Tool
from mcp_types import Tool as MCPTool
from mcp_types import ToolAnnotations

from muxd.mcp_server.limits import GuardLimits
from muxd.mcp_server.schema_lean import BYTES_PER_TOKEN, compact_json
from muxd.mcp_server.server import build_registry
from muxd.mcp_server.tool_categories import CATEGORIES

TARGET_TOKENS = 4000  # issue 27's budget for the default list


def _wire(tools: list[MCPTool]) -> str:
    return compact_json({"tools": [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in tools]})


def _sdk_own(annotations: ToolAnnotations | None) -> ToolAnnotations | None:
    """The four hints as muxd's tools declare them (the published ones leave out the defaults)."""
    if annotations is None:
        return None
    read_only = bool(annotations.read_only_hint)
    return ToolAnnotations(read_only_hint=read_only,
                           destructive_hint=False if read_only else annotations.destructive_hint,
                           idempotent_hint=True if read_only else bool(annotations.idempotent_hint),
                           open_world_hint=annotations.open_world_hint)


async def measure(categories: list[str] | None) -> tuple[int, int, int]:
    """(tools, bytes published, bytes of the SDK's own rendering) for `categories` (None: all)."""
    registry = build_registry(None, GuardLimits(), categories=categories)
    published = await registry.server.list_tools()
    peers = []
    for tool in registry.server._tool_manager.list_tools():  # noqa: SLF001 - the registered functions
        own = Tool.from_function(tool.fn, name=tool.name, description=tool.description,
                                 annotations=_sdk_own(tool.annotations))
        peers.append(MCPTool(name=own.name, description=own.description, input_schema=own.parameters,
                             output_schema=own.output_schema, annotations=own.annotations))
    return len(published), len(_wire(published).encode()), len(_wire(peers).encode())


def _line(label: str, tools: int, lean: int, peer: int) -> dict[str, Any]:
    print(f"{label:<34} {tools:>5} {lean:>8} {lean / BYTES_PER_TOKEN:>8.0f} {peer:>8} {peer / BYTES_PER_TOKEN:>8.0f} "
          f"{lean / peer:>6.2f}")
    return {"tools": tools, "bytes": lean, "tokens": lean / BYTES_PER_TOKEN, "sdk_bytes": peer,
            "sdk_tokens": peer / BYTES_PER_TOKEN}


async def run() -> dict[str, Any]:
    print(f"{'tools/list of':<34} {'tools':>5} {'bytes':>8} {'tokens':>8} {'sdk B':>8} {'sdk tok':>8} {'ratio':>6}")
    out: dict[str, Any] = {"all": _line("all (the default)", *await measure(None))}
    for category in CATEGORIES:
        out[category] = _line(f"--tools {category}", *await measure([category]))
    for selection in (["summary", "panes"], ["summary", "panes", "executions"]):
        out[",".join(selection)] = _line(f"--tools {','.join(selection)}", *await measure(selection))
    total = out["all"]["tokens"]
    print(f"default list: {total:.0f} tokens (bytes/4), {TARGET_TOKENS} targeted: "
          f"{'met' if total <= TARGET_TOKENS else 'MISSED'}")
    seen = await model_visible(None)
    out["model_visible"] = {"bytes": seen, "tokens": seen / BYTES_PER_TOKEN}
    print(f"of which name, description and inputSchema (the fields the Anthropic and OpenAI APIs' tool "
          f"definitions carry to a model): {seen} bytes, {seen / BYTES_PER_TOKEN:.0f} tokens")
    return out


async def model_visible(categories: list[str] | None) -> int:
    """Bytes of the tools' names, descriptions and input schemas: the part of the list a model reads."""
    registry = build_registry(None, GuardLimits(), categories=categories)
    return len(compact_json([{"name": t.name, "description": t.description, "inputSchema": t.input_schema}
                             for t in await registry.server.list_tools()]).encode())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    figures = asyncio.run(run())
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=2)


if __name__ == "__main__":
    main()
