"""The web view's addresses of things, made in one place: a pane's page, an execution's."""

from __future__ import annotations

from muxd.web.html import esc


def pane_path(pane_id: str, tail: str = "") -> str:
    """The page of `pane_id` ("%3" -> "/pane/3"), or one of its actions (`tail`: "/keys")."""
    return f"/pane/{pane_id.lstrip('%')}{tail}"


def execution_link(execution_id: str) -> str:
    """An <a> to the execution's page, showing its id."""
    return f'<a href="/execution/{esc(execution_id)}" class="exec-id">{esc(execution_id)}</a>'
