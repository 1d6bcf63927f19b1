"""The web view's HTML, built as strings: every value that comes from a pane, an agent or a user
goes through `esc` (html.escape, quotes included), so a name, a question or a screen line can
never become markup. Pages give `page()` their body; it adds the head (stylesheet, script,
CSRF meta), the navigation and the logout form."""

from __future__ import annotations

import html
from typing import Protocol

from muxd.web.security import CSRF_FIELD
from muxd.web.sessions import WebSession


class HasCsrf(Protocol):
    """A session, or what a shared live board is drawn for (its CSRF token "": the script fills it in)."""

    @property
    def csrf(self) -> str: ...

# The navigation, in order: (path, label). Pages of other modules are linked here once they exist.
NAV: tuple[tuple[str, str], ...] = (("/", "Agents"), ("/history", "History"), ("/failures", "Failures"),
                                    ("/tasks", "Tasks"), ("/charts", "Charts"))


def esc(value: object) -> str:
    """`value` as HTML text (or an attribute value in double quotes): nothing in it is markup."""
    return html.escape("" if value is None else str(value), quote=True)


def csrf_field(session: HasCsrf) -> str:
    """The hidden field every form that changes something carries (security.py)."""
    return f'<input type="hidden" name="{CSRF_FIELD}" value="{esc(session.csrf)}">'


def post_form(session: WebSession, action: str, fields: dict[str, str], label: str, *,
              css_class: str = "") -> str:
    """A one-button form POSTing `fields` (and the CSRF token) to `action`."""
    hidden = "".join(f'<input type="hidden" name="{esc(k)}" value="{esc(v)}">' for k, v in fields.items())
    button_class = f' class="{esc(css_class)}"' if css_class else ""
    return (f'<form method="post" action="{esc(action)}">{csrf_field(session)}{hidden}'
            f'<button type="submit"{button_class}>{esc(label)}</button></form>')


def page(title: str, body: str, session: WebSession | None, *, current: str = "",
         scripts: tuple[str, ...] = ()) -> str:
    """A whole page: `body` (already HTML, its values escaped) under the navigation. `scripts`: more
    files of static/ the page runs after app.js (the CSP allows no inline script)."""
    meta = f'<meta name="csrf-token" content="{esc(session.csrf)}">' if session is not None else ""
    nav = ""
    if session is not None:
        marked = ' aria-current="page"'
        links = "".join(f'<a href="{esc(path)}"{marked if path == current else ""}>{esc(label)}</a>'
                        for path, label in NAV)
        who = f'<span class="who">{esc(session.principal)} · {esc(session.tier)}</span>'
        logout = (f'<form method="post" action="/logout" class="logout">{csrf_field(session)}'
                  '<button type="submit">Log out</button></form>')
        nav = f'<nav>{links}{who}{logout}</nav>'
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{esc(title)} · muxd</title>{meta}"
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            '<link rel="icon" href="data:,">'  # no favicon request (a 404 in every page's console)
            '<link rel="stylesheet" href="/static/style.css">'
            '<script src="/static/app.js" defer></script>'
            + "".join(f'<script src="/static/{esc(name)}" defer></script>' for name in scripts) + "</head>"
            f"<body>{nav}<main>{body}</main></body></html>")
