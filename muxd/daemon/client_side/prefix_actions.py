"""What a key after the prefix does for an attached client: the actions of prefix_keys.py's
table, run against the client's session (tmux's default key bindings). A key the user bound
runs its line as the `C-b :` prompt does (command_prompt.py), and one of these when the line
is a default key's tmux command."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from muxd.daemon.client_side import session_actions as actions
from muxd.daemon.client_side.prefix_keys import SEND_PREFIX, Binding, binding_for
from muxd.daemon.client_side.status_prompt import Prompt
from muxd.daemon.layouts import keys as layout_keys
from muxd.daemon.layouts.pane_resize import resize_in_layout
from muxd.protocol.messages import ResizePane

if TYPE_CHECKING:
    from muxd.daemon.client_side.client import Client


def _bound(client: Client, key: bytes) -> tuple[str | Binding | None, bool]:
    """What `key` after the prefix runs — the user's command line, else a default binding (the
    prefix itself: SEND_PREFIX), None if nothing — and whether it repeats (-r)."""
    bindings = client.daemon.registry.key_bindings
    user = bindings.lookup("prefix", key)
    if user is not None:  # its command None: unbound by the user
        return user.command, user.command is not None and user.repeat
    if bindings.defaults_unbound:
        return None, False
    default = SEND_PREFIX if key == client.prefix else binding_for(key)
    return default, default is not None and default.repeat


def after_prefix(client: Client, key: bytes) -> bool:
    """The key after the prefix (or a repeat): the user's binding, else the default one (an
    unbound key is ignored, as in tmux); False when it only went to a program (the prefix
    pressed twice sends it, to copy mode if the pane is in it, as tmux's send-prefix). A key bound with -r opens repeat-time, in which keys bound with
    -r need no prefix."""
    bound, repeat = _bound(client, key)
    shown = True
    if bound is SEND_PREFIX:
        shown = client.key_to_pane(client.prefix)
    elif isinstance(bound, str):
        client.run_line(bound)  # command_prompt.py's: it runs default bindings, so it sits above this module
    elif bound is not None:
        run_binding(client, bound)
    milliseconds = client.daemon.registry.options.number("repeat-time", client.session.id)
    client.repeat_until = time.monotonic() + milliseconds / 1000 if repeat else 0.0
    return shown


def repeats(client: Client, key: bytes) -> bool:
    """Whether `key`, pressed in an open repeat-time, is one to run again without the prefix."""
    return time.monotonic() < client.repeat_until and _bound(client, key)[1]


def run_binding(client: Client, binding: Binding) -> None:
    """Do what `binding` says; MuxdError for anything to show in the status line."""
    session, daemon = client.session, client.daemon
    if binding.action == "send_prefix":  # as a key pressed alone: copy mode takes it (C-b C-b pages up)
        client.key_to_pane(client.prefix)
        return
    match binding.action:
        case "new_window":
            actions.new_window(daemon, session)
        case "next_window":
            actions.step_window(session, 1)
        case "previous_window":
            actions.step_window(session, -1)
        case "select_window":
            assert isinstance(binding.argument, int)
            actions.select_window(session, binding.argument)
        case "last_window":
            actions.last_window(session)
        case "split":
            actions.split(daemon, session, binding.argument == "horizontal")
        case "select_pane":
            actions.select_pane(session, binding.argument)  # type: ignore[arg-type]
        case "next_pane":
            actions.next_pane(session)
        case "last_pane":
            actions.last_pane(session)
        case "layout":
            layout_keys.run(daemon.registry, session, str(binding.argument))
        case "zoom":
            actions.toggle_zoom(session)
        case "resize_pane":
            _resize_active(client, str(binding.argument))
        case "kill_pane":
            pane = client.active_pane()
            if pane is not None:
                client.prompt = Prompt(f"kill-pane {pane.id}? (y/n)",
                                       lambda _answer: actions.kill_pane(daemon.registry, pane), confirm=True)
        case "kill_window":
            window = session.active_window
            if window is not None:
                client.prompt = Prompt(f"kill-window {window.name}? (y/n)",
                                       lambda _answer: actions.kill_window(daemon.registry, window), confirm=True)
        case "rename_window":
            window = session.active_window
            if window is not None:
                client.prompt = Prompt("(rename-window) ",
                                       lambda name: actions.rename_window(daemon.registry, window, name), text=window.name)
        case "rename_session":
            client.prompt = Prompt("(rename-session) ", lambda name: daemon.registry.rename_session(session, name),
                                   text=session.name)
        case "detach":
            client.detach(f"detached (from session {session.name})")
        case "list_keys":
            client.open_help()
        case "copy_mode":
            pane = client.active_pane()
            if pane is not None and pane.id not in client.hub.copy_modes:
                client.hub.copy_modes[pane.id] = client.new_copy_mode(pane)
        case "paste_buffer":
            client.paste_buffer()
        case "choose_tree":
            client.open_chooser(windows=binding.argument == "windows")
        case "command_prompt":
            client.open_command_prompt()
        case "display_panes":
            client.show_pane_numbers()
    client.hub.fit_session(session)  # a new window or pane takes the session's size


def _resize_active(client: Client, how: str) -> None:
    """C-b M-/C-arrows: move the active pane's divider (`how`: direction then cells, "U5").
    Alone in its window the pane has no divider: nothing, as in tmux."""
    window, pane = client.session.active_window, client.active_pane()
    if window is not None and pane is not None and len(window.panes) > 1:
        resize_in_layout(window, pane, ResizePane(id=0, direction=how[0], amount=int(how[1:])))  # type: ignore[arg-type]
