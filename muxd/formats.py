"""tmux format strings: `expand("#{session_name}:#{window_index}", variables)`.

Pure: a template and a mapping of variable names to strings in, text out (tmux's format.c).
What is understood:

- `#{name}`: a variable; one nobody defines expands to "" as in tmux.
- `#{?cond,a,b}`: cond is a variable name or a format; it is true
  when it expands to something other than "" and "0".
- `#{==:a,b}` `#{!=:a,b}` `#{<:a,b}` `#{>:a,b}` `#{<=:a,b}` `#{>=:a,b}`, `#{||:a,b}` `#{&&:a,b}`,
  `#{m:pattern,text}` (fnmatch): "1" or "0", their operands expanded first.
- Modifiers before `:`, several joined by `;`: `=N`/`=-N` (keep the first/last N characters),
  `pN`/`p-N` (pad), `l` (literal), `b`/`d` (basename/dirname), `q` (shell quote), `t` (a
  time), `n` (length), `E` (expand the value as a format), `s/re/with/` (substitute).
- `##` is `#`, `#,` is `,`, `#}` is `}`; `#D #F #H #h #I #P #S #T #W` are tmux's short names.
- `#(command)` expands to "": a format never runs a shell here.
- A malformed `#{…}` (`#{?cond,a}`, `#{==:a}`, an unclosed one) ends the text there, as in tmux 3.3.

Variables are built from muxd's records by muxd/daemon/panes/format_variables.py.
"""

from __future__ import annotations

# re only where a modifier or #{m/r:} needs it: most formats (`#{pane_id}`) expand without it, and it
# costs a tmux shim call ~4 ms (cli/tmux_fast_path.py). Mapping is for the type checker.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

# tmux's one-letter aliases (format.c format_upper / format_lower).
SHORT_NAMES = {
    "D": "pane_id", "F": "window_flags", "H": "host", "h": "host_short", "I": "window_index",
    "P": "pane_index", "S": "session_name", "T": "pane_title", "W": "window_name",
}
MAX_DEPTH = 32  # nested #{E:…} and conditions: tmux stops at its loop limit too

_COMPARISONS = ("==", "!=", "<=", ">=", "<", ">", "||", "&&")
_MODIFIER = r"(?:=|p)-?\d+|s/(?:\\.|[^/])*/(?:\\.|[^/])*/i?|[lbdqtnE]"  # compiled once, by re's cache


class _Invalid(Exception):
    """A malformed `#{…}` (`#{?cond,a}`, `#{==:a}`): tmux drops it and everything after it."""


def expand(template: str, variables: Mapping[str, str], *, _depth: int = 0) -> str:
    """`template` with every format in it replaced from `variables`."""
    out: list[str] = []
    try:
        _expand_into(out, template, variables, _depth)
    except _Invalid:
        pass
    return "".join(out)


def _expand_into(out: list[str], template: str, variables: Mapping[str, str], _depth: int) -> None:
    if _depth > MAX_DEPTH:
        raise _Invalid

    at = 0
    while True:
        hash_at = template.find("#", at)
        if hash_at < 0 or hash_at == len(template) - 1:
            out.append(template[at:])
            return
        out.append(template[at:hash_at])
        what = template[hash_at + 1]
        if what == "{":
            end = _closing(template, hash_at + 2)
            if end < 0:  # unclosed: tmux gives up on the rest
                raise _Invalid
            out.append(_replace(template[hash_at + 2:end], variables, _depth))
            at = end + 1
        elif what == "(":
            end = _closing(template, hash_at + 2, "(", ")")
            at = len(template) if end < 0 else end + 1
        elif what in "#,}":
            out.append(what)
            at = hash_at + 2
        elif what in SHORT_NAMES:
            out.append(variables.get(SHORT_NAMES[what], ""))
            at = hash_at + 2
        else:  # `#[style]` and anything else stay as written
            out.append("#")
            at = hash_at + 1


def is_true(value: str) -> bool:
    """tmux's truth: anything but "" and "0"."""
    return value not in ("", "0")


def _closing(text: str, start: int, opening: str = "{", closing: str = "}") -> int:
    """Index of the `closing` that ends a bracket whose content starts at `start`, or -1
    (every bracket counts, escaped or not, as in tmux's format_expand1)."""
    depth = 1
    for at in range(start, len(text)):
        if text[at] == opening:
            depth += 1
        elif text[at] == closing:
            depth -= 1
            if depth == 0:
                return at
    return -1


def _split_top(text: str, limit: int = -1) -> list[str]:
    """`text` split at commas outside any nested `#{…}`; `#,` `##` `#{` `#}` `#:` are skipped
    over (tmux's format_skip)."""
    parts: list[str] = []
    depth, start, at = 0, 0, 0
    while at < len(text):
        char = text[at]
        if char == "#" and text[at + 1:at + 2] == "{":
            depth += 1
        if char == "#" and at + 1 < len(text) and text[at + 1] in ",#{}:":
            at += 2
            continue
        if char == "}":
            depth -= 1
        elif char == "," and depth == 0 and (limit < 0 or len(parts) < limit):
            parts.append(text[start:at])
            start = at + 1
        at += 1
    parts.append(text[start:])
    return parts


def _condition(text: str, variables: Mapping[str, str], depth: int) -> bool:
    if "#" in text:
        return is_true(expand(text, variables, _depth=depth + 1))
    return is_true(variables.get(text, ""))


def _replace(content: str, variables: Mapping[str, str], depth: int) -> str:
    """What one `#{content}` expands to."""
    if content.startswith("?"):
        return _conditional(content[1:], variables, depth)
    for op in _COMPARISONS:
        if content.startswith(op + ":"):
            return _compare(op, content[len(op) + 1:], variables, depth)
    if content.startswith(("m:", "m/")):
        return _match(content, variables, depth)
    modifiers, name = _modifiers(content)
    if "l" in modifiers:
        return name
    value = variables.get(name, "") if "#" not in name else expand(name, variables, _depth=depth + 1)
    for modifier in modifiers:
        value = _apply(modifier, value, variables, depth)
    return value


def _conditional(body: str, variables: Mapping[str, str], depth: int) -> str:
    parts = _split_top(body, 2)  # tmux 3.3: cond, then, and all the rest is else
    if len(parts) < 3:  # `#{?cond,yes}` is no format in tmux 3.3
        raise _Invalid
    chosen = parts[1] if _condition(parts[0], variables, depth) else parts[2]
    return expand(chosen, variables, _depth=depth + 1)


def _compare(op: str, body: str, variables: Mapping[str, str], depth: int) -> str:
    parts = _split_top(body, 1)
    if len(parts) != 2:
        raise _Invalid
    left, right = (expand(part, variables, _depth=depth + 1) for part in parts)
    if op == "||":
        result = is_true(left) or is_true(right)
    elif op == "&&":
        result = is_true(left) and is_true(right)
    else:
        result = {"==": left == right, "!=": left != right, "<": left < right, ">": left > right,
                  "<=": left <= right, ">=": left >= right}[op]
    return "1" if result else "0"


def _match(content: str, variables: Mapping[str, str], depth: int) -> str:
    flags, _, body = content.partition(":")
    parts = _split_top(body, 1)
    if len(parts) != 2:
        raise _Invalid
    pattern, text = (expand(part, variables, _depth=depth + 1) for part in parts)
    if "r" in flags[2:]:
        import re

        found = re.search(pattern, text, re.IGNORECASE if "i" in flags[2:] else 0) is not None
    else:
        import fnmatch

        found = fnmatch.fnmatchcase(text, pattern)
    return "1" if found else "0"


def _modifiers(content: str) -> tuple[list[str], str]:
    """(modifiers, the rest) of `mod;mod:name`; no modifiers unless the whole prefix parses."""
    if ":" not in content:  # a modifier list ends at its colon: without one, none (most variables)
        return [], content
    import re

    modifier = re.compile(_MODIFIER)
    modifiers: list[str] = []
    at = 0
    while True:
        found = modifier.match(content, at)
        if found is None:
            return [], content
        modifiers.append(found.group())
        at = found.end()
        if content[at:at + 1] == ":":
            return modifiers, content[at + 1:]
        if content[at:at + 1] != ";":
            return [], content
        at += 1


def _apply(modifier: str, value: str, variables: Mapping[str, str], depth: int) -> str:
    kind = modifier[0]
    if kind == "E":
        return expand(value, variables, _depth=depth + 1)
    if kind == "t":
        import time

        return time.strftime("%a %b %e %H:%M:%S %Y", time.localtime(int(value))) if value.isdigit() else value
    if kind == "s":
        import re

        parsed = re.match(r"s/((?:\\.|[^/])*)/((?:\\.|[^/])*)/(i?)", modifier)
        assert parsed is not None  # _MODIFIER matched it
        pattern, replacement, flags = parsed.groups()
        try:
            return re.sub(pattern, replacement.replace("\\/", "/"), value, flags=re.IGNORECASE if flags else 0)
        except re.error:
            return value
    if kind == "b":
        return value.rstrip("/").rsplit("/", 1)[-1] if value.strip("/") else value
    if kind == "d":
        head = value.rstrip("/").rsplit("/", 1)[0] if "/" in value.rstrip("/") else "."
        return head or "/"
    if kind == "q":
        import re

        return re.sub(r"([|&;<>()$`\\\"'*?\[# =%])", r"\\\1", value)
    if kind == "n":
        return str(len(value))
    width = int(modifier[1:])
    if kind == "=":
        return value[:width] if width >= 0 else value[width:]
    return value.ljust(width) if width >= 0 else value.rjust(-width)  # p
