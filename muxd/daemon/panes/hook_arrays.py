"""Hooks, stored as tmux stores them: an array option per hook name, at the global, session,
window or pane level, each item one command line (`session-created[0]`, `[1]`…).

As tmux: a hook name has a scope. A session hook (alert-*, client-*, session-*, window-linked,
window-unlinked) is set on a session or globally; a window hook (pane-died, pane-exited,
window-renamed, and muxd's agent-* and execution-finished, which happen in a pane) on a pane
(`-p`), a window, or globally. An event runs the hook of the most specific level that has it
set, and only that one: the pane's, else its window's, else the global one (tmux's
notify_insert_hook walks options_get's parents the same way). The global arrays always exist
(empty until set), so `show-hooks -g` lists every name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal

from muxd.errors import BadRequest
from muxd.protocol.event_messages import EVENT_KINDS

HookScope = Literal["session", "window"]
HOOK_INDEX_MAX = 1023  # `name[N]`: tmux takes any u_int; a few hundred commands on one event is plenty
_SESSION_PREFIXES = ("alert-", "client-", "session-")
HOOK_SCOPES: dict[str, HookScope] = {
    name: "session" if name.startswith(_SESSION_PREFIXES) or name in ("window-linked", "window-unlinked")
    else "window" for name in sorted(EVENT_KINDS)}
_INDEXED = re.compile(r"(.+)\[(\d+)\]")


def hook_named(text: str) -> tuple[str, int | None]:
    """(name, index) of `name` or `name[N]`; a unique prefix names a hook, as in tmux. BadRequest
    with tmux's words otherwise ("invalid option", "ambiguous option")."""
    name, index = text, None
    indexed = _INDEXED.fullmatch(text)
    if indexed is not None:
        name, index = indexed.group(1), int(indexed.group(2))
        if index > HOOK_INDEX_MAX:
            raise BadRequest(f"index too large: {text} (at most {HOOK_INDEX_MAX})", option=text)
    elif "[" in text:
        raise BadRequest(f"invalid option: {text}", option=text)
    if name in HOOK_SCOPES:
        return name, index
    matches = [hook for hook in HOOK_SCOPES if hook.startswith(name)] if name else []
    if len(matches) > 1:
        raise BadRequest(f"ambiguous option: {text}", option=text)
    if not matches:
        raise BadRequest(f"invalid option: {text}", option=text)
    return matches[0], index


Items = dict[int, str]  # index -> command line


class HookArrays:
    """Every hook set at every level. Owners are object ids ($N, @N, %N), None for global."""

    def __init__(self) -> None:
        self._global: dict[str, Items] = {}
        self._local: dict[str, dict[str, Items]] = {}  # owner id -> hook name -> items

    def _levels(self, owner: str | None) -> dict[str, Items]:
        return self._global if owner is None else self._local.setdefault(owner, {})

    def own(self, name: str, owner: str | None) -> Items | None:
        """The items set at `owner`'s level; None when the hook is not set there (globally it
        always is, if only as an empty array)."""
        if owner is None:
            return dict(self._global.get(name, {}))
        items = self._local.get(owner, {}).get(name)
        return dict(items) if items is not None else None

    def set(self, name: str, owner: str | None, command: str, index: int | None = None,
            append: bool = False) -> None:
        """`set-hook`: the whole array becomes this one command; with `index`, that item;
        `append` without an index: the first free index (tmux's options_array_assign)."""
        levels = self._levels(owner)
        items = levels.setdefault(name, {})
        if index is None and not append:
            items.clear()
            index = 0
        elif index is None:
            index = next(i for i in range(HOOK_INDEX_MAX + 2) if i not in items)
            if index > HOOK_INDEX_MAX:
                raise BadRequest(f"too many commands on {name} (at most {HOOK_INDEX_MAX + 1})", option=name)
        items[index] = command

    def unset(self, name: str, owner: str | None, index: int | None = None) -> None:
        """`set-hook -u`: the item at `index`, else the whole hook (the level then inherits it;
        a global one is empty again)."""
        levels = self._global if owner is None else self._local.get(owner, {})
        if index is None:
            levels.pop(name, None)
        elif name in levels:
            levels[name].pop(index, None)

    def commands(self, name: str, owners: Iterable[str | None]) -> list[str]:
        """The command lines of the first of `owners` (nearest first) that has `name` set, else
        the global ones; in index order."""
        for owner in owners:
            items = self._local.get(owner, {}).get(name) if owner is not None else None
            if items is not None:
                return [items[i] for i in sorted(items)]
        items = self._global.get(name, {})
        return [items[i] for i in sorted(items)]

    def shown(self, owner: str | None, scope: HookScope) -> list[tuple[str, int | None, str]]:
        """(name, index, command) as show-hooks lists a level, in name order: every hook of
        `scope` globally (an empty one as (name, None, "")), else those set on `owner`."""
        rows: list[tuple[str, int | None, str]] = []
        for name in (n for n, s in HOOK_SCOPES.items() if s == scope):
            items = self.own(name, owner)
            if items is None:
                continue
            rows += [(name, i, items[i]) for i in sorted(items)] if items else [(name, None, "")]
        return rows

    def forget(self, owner: str) -> None:
        self._local.pop(owner, None)
