"""The web view's guards over plain HTTP, against a real daemon and a real `muxd web`: the CSP
and its companions on every answer, the login (a token the daemon refuses makes no session),
the session cookie's flags, the Host, Origin and CSRF checks on every action, a revoked token
ending its sessions; and the grid escaping every value a pane or an agent puts in it."""

from __future__ import annotations

import time

import pytest

from muxd.detectors.state import Activity, AgentError, AgentState, Confirmation
from muxd.protocol.messages import PaneInfo
from muxd.testing.wait import wait_until
from muxd.testing.web import EventStream, WebClient, WebView, make_token
from muxd.web.agents_grid import grid_html
from muxd.web.security import CSP


def test_every_answer_carries_the_csp_and_the_login_makes_a_strict_cookie(muxd_server, web_view):
    web = WebClient(web_view.origin)
    for path in ("/", "/login", "/static/app.js", "/no-such-page"):
        reply = web.get(path)
        assert reply.headers["content-security-policy"] == CSP, path
        assert reply.headers["x-frame-options"] == "DENY" and reply.headers["x-content-type-options"] == "nosniff"
    assert "'unsafe-inline'" not in CSP and "script-src 'self'" in CSP and "frame-ancestors 'none'" in CSP
    assert web.get("/").status == 303 and web.get("/").headers["location"] == "/login"  # no session: log in
    assert web.get("/events").status == 303
    # Not a token, and a token-shaped string the daemon does not know: refused, no session.
    assert web.login("hunter2").status == 403 and not web.cookies
    refused = web.login("muxd_" + "x" * 43)
    assert refused.status == 403 and "unauthorized" in refused.text and not web.cookies
    reply = web.login(make_token(muxd_server, "execute_advanced", "cookie-check"))
    assert reply.status == 303 and reply.headers["location"] == "/"
    cookie = reply.headers["set-cookie"]
    port = web_view.origin.rsplit(":", 1)[1]
    assert cookie.startswith(f"muxd_session_{port}=") and "HttpOnly" in cookie and "SameSite=strict" in cookie \
        and "Path=/" in cookie, cookie
    page = web.get("/")
    assert page.status == 200 and "token:cookie-check" in page.text and "<script>" not in page.text


def test_actions_need_this_origin_and_the_session_csrf_token(muxd_server, web_view):
    web = WebClient(web_view.origin)
    web.login(make_token(muxd_server, "execute_advanced", "csrf-check"))
    csrf = web.csrf()
    answer = {"pane": "%99", "option": "0", "text": "1. Yes", "csrf_token": csrf}
    assert web.post("/answer", answer, origin=None).status == 403  # no Origin, no Referer
    assert web.post("/answer", answer, origin="http://evil.example").status == 403
    assert web.post("/answer", answer, origin=f"{web_view.origin}.evil.example").status == 403
    no_token = web.post("/answer", {k: v for k, v in answer.items() if k != "csrf_token"})
    assert no_token.status == 403 and "CSRF" in no_token.text
    assert web.post("/answer", {**answer, "csrf_token": csrf[:-1] + "x"}).status == 403
    # Through every check, the daemon answers: there is no pane %99.
    assert web.post("/answer", answer).status == 404
    via_referer = web.post("/answer", answer, origin=None, headers={"Referer": web_view.url})
    assert via_referer.status == 404
    # A name pointed at 127.0.0.1 by someone else's DNS is not this server.
    assert web.get("/", headers={"Host": "evil.example"}).status == 421
    # Logging out needs the token too; then the old cookie is worth nothing.
    old = dict(web.cookies)
    assert web.post("/logout", {"csrf_token": csrf}).status == 303 and not web.cookies
    web.cookies.update(old)
    assert web.get("/").status == 303


def test_actions_are_rate_limited_per_principal_as_mcp_tools_are(muxd_server):
    muxd_server.env.update(MUXD_MCP_RATE="0.1", MUXD_MCP_BURST="3")
    view = WebView(muxd_server)
    try:
        web = WebClient(view.origin)
        web.login(make_token(muxd_server, "execute_advanced", "hasty"))
        answer = {"pane": "%99", "option": "0", "text": "1. Yes", "csrf_token": web.csrf()}
        assert [web.post("/answer", answer).status for _ in range(4)] == [404, 404, 404, 429]
    finally:
        view.stop()


def test_logging_out_ends_the_browsers_event_stream(muxd_server, web_view):
    web = WebClient(web_view.origin)
    web.login(make_token(muxd_server, "view_only", "streamer"))
    stream = EventStream(web_view.origin, web.cookies)
    try:
        assert stream.status == 200
        first = stream.next_event()
        assert first is not None and first[0] == "grid" and 'class="board"' in first[1]
        web.post("/logout", {"csrf_token": web.csrf()})
        assert stream.next_event() == ("ended", "logged out")
    finally:
        stream.close()


def test_a_stream_says_so_when_the_daemon_goes(muxd_server, web_view):
    web = WebClient(web_view.origin)
    web.login(make_token(muxd_server, "view_only", "left-behind"))
    stream = EventStream(web_view.origin, web.cookies)
    try:
        assert stream.next_event()[0] == "grid"
        muxd_server.stop()
        event = stream.next_event()
        assert event is not None and event[0] == "ended" and "connection" in event[1], event
    finally:
        stream.close()


def test_a_revoked_token_ends_its_sessions(muxd_server, web_view):
    web = WebClient(web_view.origin)
    web.login(make_token(muxd_server, "view_only", "soon-revoked"))
    assert web.get("/").status == 200
    muxd_server.run_here("token", "revoke", "soon-revoked", check=True)
    # The daemon closes the token's connections; the next page greets again and is refused.
    wait_until(lambda: web.get("/").status == 303, timeout=10, message="the revoked session sent to /login")
    assert web.get("/").headers["location"] == "/login"


MARKUP = '<img src=x onerror="alert(1)">'


def test_the_grid_escapes_every_value_from_a_pane_or_an_agent():
    agent = AgentState(pane_id="%1", agent_type="claude", is_agent=True,
                       activity=Activity(state="AwaitingConfirmation", since=time.time() - 5),
                       is_awaiting_confirmation=True,
                       confirmation=Confirmation(prompt=f"Run {MARKUP}?", options=[f"1. Yes {MARKUP}", "2. No"]),
                       error=AgentError(type="api_error", message=MARKUP))
    pane = PaneInfo(id="%1", session=f"s{MARKUP}", session_id="$1", window=0, window_id="@1", window_name=MARKUP,
                    index=0, name=f"n{MARKUP}", tags=[], command=["claude"], pid=1, foreground=None, cwd=None,
                    width=80, height=24, status="running", exit_code=None, created_at=0.0, title=MARKUP, active=True,
                    agent=agent, attention="waiting", attention_since=time.time() - 5, attention_text=MARKUP)
    for can_act in (True, False):
        grid = grid_html([pane], {}, can_act=can_act, csrf='"><script>')
        assert "<img" not in grid and "<script>" not in grid and 'onerror="' not in grid
        assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in grid
        assert ("<button" in grid) is can_act


@pytest.mark.parametrize("state", ["AwaitingConfirmation", "Idle"])
def test_a_grid_card_says_what_an_agent_waits_on_only_while_it_waits(state):
    agent = AgentState(pane_id="%2", agent_type="claude", is_agent=True, activity=Activity(state=state),
                       is_awaiting_confirmation=state == "AwaitingConfirmation",
                       confirmation=Confirmation(prompt="Do you want to proceed?", options=["1. Yes", "2. No"])
                       if state == "AwaitingConfirmation" else None)
    pane = PaneInfo(id="%2", session="s", session_id="$1", window=0, window_id="@1", window_name="w", index=0,
                    name=None, tags=[], command=["claude"], pid=1, foreground=None, cwd=None, width=80, height=24,
                    status="running", exit_code=None, created_at=0.0, title="", active=True, agent=agent,
                    attention="waiting" if state == "AwaitingConfirmation" else None)
    grid = grid_html([pane], {}, can_act=True)
    assert ("Do you want to proceed?" in grid) is (state == "AwaitingConfirmation")
    assert ('class="needs-you"' in grid) is (state == "AwaitingConfirmation")


def test_another_hosts_agent_shows_its_host_and_no_button():
    from muxd.web.agents_grid import FleetEntry

    agent = AgentState(pane_id="%4", agent_type="codex", is_agent=True, activity=Activity(state="AwaitingConfirmation"),
                       is_awaiting_confirmation=True, confirmation=Confirmation(prompt="Run it?", options=["1. Yes"]))
    pane = PaneInfo(id="%4@beta", session="s", session_id="$1", window=0, window_id="@1", window_name="w", index=0,
                    name=None, tags=[], command=["codex"], pid=1, foreground=None, cwd=None, width=80, height=24,
                    status="running", exit_code=None, created_at=0.0, title="", active=True, agent=agent,
                    attention="waiting")
    grid = grid_html([], {}, fleet=[FleetEntry(pane=pane, host="beta", stale=True)], can_act=True)
    assert 'data-pane="%4@beta"' in grid and '<span class="host">beta (stale)</span>' in grid
    assert "Run it?" in grid and "<button" not in grid and 'href="/pane/' not in grid


def test_which_hosts_and_origins_the_guard_takes():
    from muxd.web.security import allowed_host, same_origin

    for host in ("127.0.0.1:8766", "localhost:9000", "[::1]:80", "127.0.0.1"):
        assert allowed_host(host, frozenset()), host
    for host in ("evil.example", "127.0.0.1.evil.example:80", "", "box.lan:8766", "[::1"):
        assert not allowed_host(host, frozenset()), host
    assert allowed_host("Box.LAN:8766", frozenset({"box.lan"}))  # --allow-host box.lan
    assert same_origin({"host": "127.0.0.1:9000", "origin": "http://127.0.0.1:9000"})  # ssh -L 9000:…
    assert not same_origin({"host": "127.0.0.1:9000", "origin": "http://127.0.0.1:8766"})
    assert not same_origin({"host": "127.0.0.1:9000", "origin": "null"})
    assert same_origin({"host": "127.0.0.1:9000", "referer": "http://127.0.0.1:9000/pane/%253"})
    assert not same_origin({"host": "127.0.0.1:9000", "referer": "http://127.0.0.1:9000.evil.example/"})
    assert not same_origin({"host": "127.0.0.1:9000"})
