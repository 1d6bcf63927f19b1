"""The JSON schemas and annotations muxd publishes in tools/list, made lean without changing
what they accept: an orchestrator pays for every byte of tools/list in its context each session.

- `title` keywords go (pydantic derives them from names the schema already holds);
- `anyOf` of branches of distinct types (`X | None`, `str | list[str]`) becomes one schema
  with a type array, each branch's keywords applying to its own type only, as before;
- a `default` of null or empty ([], {}, "") goes: leaving the argument out says the same;
- a `$defs` entry used once is written where it is used;
- output schemas lose their `description`s (the tool's description says what it returns);
- annotations keep only the hints that differ from the spec's defaults (destructive and
  idempotent say nothing about a read-only tool).

A schema is a tree of schemas; names of properties are never mistaken for keywords.
"""

from __future__ import annotations

import json
from typing import Any

from mcp_types import ToolAnnotations

BYTES_PER_TOKEN = 4  # tokens are estimated as bytes / 4 of the compact JSON (tiktoken is not a dependency)

# Keywords whose value is a schema, a list of schemas, or a map of name -> schema.
_SCHEMA_VALUED = ("items", "additionalProperties", "not", "contains", "propertyNames")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_MAPS = ("properties", "$defs", "patternProperties")
# Keywords that only apply to values of one JSON type: merging branches of distinct types keeps them exact.
_TYPE_KEYWORDS = {
    "string": {"minLength", "maxLength", "pattern", "format"},
    "number": {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"},
    "integer": {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"},
    "array": {"items", "minItems", "maxItems", "uniqueItems", "prefixItems"},
    "object": {"properties", "required", "additionalProperties", "patternProperties", "minProperties",
               "maxProperties"},
    "boolean": set(),
    "null": set(),
}
_EMPTY_DEFAULTS: tuple[Any, ...] = (None, [], {}, "")
_REF_PREFIX = "#/$defs/"


def tokens_of(value: Any) -> int:
    """Estimated tokens of `value` as compact JSON (bytes / 4, the rule the benchmarks use)."""
    return len(compact_json(value)) // BYTES_PER_TOKEN


def compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def lean_input_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """An arguments schema as published: same meaning, fewer bytes."""
    return _lean(_inline_single_defs(schema), keep_descriptions=True)


def lean_output_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """An output schema as published: structure and types only."""
    return _lean(_inline_single_defs(schema), keep_descriptions=False)


def lean_annotations(annotations: ToolAnnotations | None) -> ToolAnnotations | None:
    """The hints a client cannot infer from the spec's defaults (readOnly false, destructive true,
    idempotent false, openWorld true); destructive and idempotent only for tools that write."""
    if annotations is None:
        return None
    read_only = bool(annotations.read_only_hint)
    kept: dict[str, Any] = {"title": annotations.title}
    if read_only:
        kept["read_only_hint"] = True
    else:
        # destructive is said either way: true is the default, but a tool that destroys is worth naming.
        kept["destructive_hint"] = annotations.destructive_hint
        if annotations.idempotent_hint:
            kept["idempotent_hint"] = True
    if annotations.open_world_hint is False:
        kept["open_world_hint"] = False
    return ToolAnnotations(**kept)


def _lean(node: Any, *, keep_descriptions: bool) -> Any:
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title" or (key == "description" and not keep_descriptions):
            continue
        if key == "default" and any(value == empty and type(value) is type(empty) for empty in _EMPTY_DEFAULTS):
            continue
        if key in _SCHEMA_VALUED:
            out[key] = _lean(value, keep_descriptions=keep_descriptions)
        elif key in _SCHEMA_LISTS:
            out[key] = [_lean(v, keep_descriptions=keep_descriptions) for v in value]
        elif key in _SCHEMA_MAPS:
            out[key] = {name: _lean(v, keep_descriptions=keep_descriptions) for name, v in value.items()}
        else:
            out[key] = value
    branches = out.get("anyOf")
    if isinstance(branches, list):
        merged = _merge_branches(branches)
        if merged is not None:
            del out["anyOf"]
            out = {**merged, **out}
    return out


def _merge_branches(branches: list[Any]) -> dict[str, Any] | None:
    """One schema equal to `anyOf: branches`, or None when the branches cannot merge exactly."""
    types: list[str] = []
    merged: dict[str, Any] = {}
    enum: list[Any] | None = None
    for branch in branches:
        if not isinstance(branch, dict) or not isinstance(branch.get("type"), str):
            return None
        kind = branch["type"]
        if kind in types or kind not in _TYPE_KEYWORDS:
            return None
        types.append(kind)
        for key, value in branch.items():
            if key == "type":
                continue
            if key == "description" and "description" not in merged:
                merged[key] = value  # a branch's own words (a model's docstring) describe the whole
                continue
            if key == "enum":
                enum = [*(enum or []), *value]
            elif key in _TYPE_KEYWORDS[kind] and not (kind in ("number", "integer") and key in merged):
                merged[key] = value
            else:
                return None  # a keyword that would also constrain the other branches
    if enum is not None:
        # An enum holds every allowed value: the untyped branches (null) add theirs.
        untyped = [t for t in types if t != "null" and not _enum_covers(enum, t)]
        if untyped:
            return None
        return {"enum": [*enum, *([None] if "null" in types else [])]}
    return {"type": types if len(types) > 1 else types[0], **merged}


def _enum_covers(enum: list[Any], kind: str) -> bool:
    python = {"string": str, "integer": int, "number": (int, float), "boolean": bool, "array": list, "object": dict}
    return any(isinstance(v, python[kind]) for v in enum)  # type: ignore[arg-type]


def _inline_single_defs(schema: dict[str, Any]) -> dict[str, Any]:
    defs = schema.get("$defs")
    if not isinstance(defs, dict):
        return schema
    counts: dict[str, int] = {}
    _count_refs(schema, counts)
    single = {name for name in defs if counts.get(name, 0) == 1 and not _refers_to(defs[name], name)}
    if not single:
        return schema

    def inline(node: Any) -> Any:
        if isinstance(node, list):
            return [inline(v) for v in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.removeprefix(_REF_PREFIX) in single and ref.startswith(_REF_PREFIX):
            rest = {k: v for k, v in node.items() if k != "$ref"}
            return {**inline(defs[ref.removeprefix(_REF_PREFIX)]), **inline(rest)}
        return {k: inline(v) for k, v in node.items() if k != "$defs"}

    kept = {name: inline(body) for name, body in defs.items() if name not in single}
    out = inline(schema)
    if kept:
        out["$defs"] = kept
    return out


def _count_refs(node: Any, counts: dict[str, int]) -> None:
    if isinstance(node, list):
        for v in node:
            _count_refs(v, counts)
    elif isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_REF_PREFIX):
            name = ref.removeprefix(_REF_PREFIX)
            counts[name] = counts.get(name, 0) + 1
        for v in node.values():
            _count_refs(v, counts)


def _refers_to(node: Any, name: str) -> bool:
    counts: dict[str, int] = {}
    _count_refs(node, counts)
    return name in counts
