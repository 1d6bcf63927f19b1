"""How a registered tool is published: what the SDK derived from its signature, tightened and
made lean (schema_lean.py).

- Its arguments model forbids extra fields, so an unknown argument is a `bad_request` naming it
  (a client that thinks it pages with `offset` must not silently read page 1 again), and its
  input schema says `additionalProperties: false`.
- Its output TypedDict also accepts the fields the guards add to a result they cut
  (`truncated`, `original_count`, …, see truncation.py): they are declared once in the README,
  not in every outputSchema, which JSON Schema leaves open to them.
- Its category goes in `_meta` (MCP tool names may not hold the "/" of `category/name`).
"""

from __future__ import annotations

import types
from typing import Any

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel, ConfigDict
from typing_extensions import get_type_hints, is_typeddict

from muxd.mcp_server.schema_lean import lean_annotations, lean_input_schema, lean_output_schema
from muxd.mcp_server.schemas import Truncatable
from muxd.mcp_server.tool_categories import CATEGORY_META_KEY

TRUNCATION_FIELDS = frozenset(Truncatable.__annotations__)


def publish(server: MCPServer[Any], name: str, category: str) -> dict[str, Any]:
    """Settle what tool `name` of `server` publishes and accepts; returns its input schema."""
    # The SDK keeps registered tools in its ToolManager and offers no public handle on one.
    tool = server._tool_manager.get_tool(name)  # noqa: SLF001
    assert tool is not None, name
    metadata = tool.fn_metadata
    strict: type[BaseModel] = type(metadata.arg_model.__name__, (metadata.arg_model,), {
        "model_config": ConfigDict(extra="forbid", arbitrary_types_allowed=True),
        "__module__": metadata.arg_model.__module__})
    metadata.arg_model = strict  # type: ignore[assignment]
    tool.parameters = lean_input_schema(strict.model_json_schema(by_alias=True))
    if metadata.output_schema is not None:
        published = lean_output_schema(metadata.output_schema)
        properties = published.get("properties")
        if isinstance(properties, dict):
            published["properties"] = {k: v for k, v in properties.items() if k not in TRUNCATION_FIELDS}
        metadata.output_schema = published
        metadata.output_model = _cuttable(metadata.output_model)
    tool.annotations = lean_annotations(tool.annotations)
    tool.meta = {**(tool.meta or {}), CATEGORY_META_KEY: category}
    return tool.parameters


def _cuttable(model: Any) -> Any:
    """`model` also accepting the truncation fields, when it is a TypedDict without them."""
    if not is_typeddict(model) or TRUNCATION_FIELDS <= set(get_type_hints(model)):
        return model
    return types.new_class(model.__name__, (model, Truncatable))
