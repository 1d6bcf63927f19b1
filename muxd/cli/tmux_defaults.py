"""What tmux does where muxd's CLI would do otherwise, as data: the formats of tmux's commands
given no -F, the flags tmux has that muxd takes without acting on them, and its `=name` targets.
Read by the full `muxd tmux` (tmux_commands.py) and by its fast path (tmux_fast_path.py), which
must answer alike; imports nothing.
"""

from __future__ import annotations

_PANE_TAIL = ("[#{pane_width}x#{pane_height}] [history #{history_size}/#{history_limit}, #{history_bytes} bytes] "
              "#{pane_id}#{?pane_active, (active),}#{?pane_dead, (dead),}")
_NEW_PANE = "#{session_name}:#{window_index}.#{pane_index}"
# tmux's formats where a command is given no -F (cmd-list-*.c, cmd-new-*.c, cmd-split-window.c).
DEFAULT_FORMATS = {
    "new-session": "#{session_name}:",
    "new-window": _NEW_PANE,
    "split-window": _NEW_PANE,
    "break-pane": _NEW_PANE,
    "list-sessions": ("#{session_name}: #{session_windows} windows (created #{t:session_created})"
                      "#{?session_grouped, (group ,}#{session_group}#{?session_grouped,),}"
                      "#{?session_attached, (attached),}"),
    "list-windows": ("#{window_index}: #{window_name}#{window_raw_flags} (#{window_panes} panes) "
                     "[#{window_width}x#{window_height}] [layout #{window_layout}] #{window_id}"
                     "#{?window_active, (active),}"),
    "list-windows -a": ("#{session_name}:#{window_index}: #{window_name}#{window_raw_flags} "
                        "(#{window_panes} panes) [#{window_width}x#{window_height}] "),
    "list-panes": "#{pane_index}: " + _PANE_TAIL,
    "list-panes -s": "#{window_index}.#{pane_index}: " + _PANE_TAIL,
    "list-panes -a": "#{session_name}:#{window_index}.#{pane_index}: " + _PANE_TAIL,
}
# Flags tmux has that muxd takes without acting on them (a value after those ending in "=").
# Only flags whose absence changes nothing a tool relies on: sizes, placement, attach details
# (new-session -A is acted on: tmux_commands.py attaches to the session if it exists).
TMUX_ONLY_FLAGS = {
    "new-session": ("-A", "-D", "-E", "-X", "-f="),
    "new-window": ("-a", "-b", "-k", "-S"),
    "split-window": ("-b", "-f", "-I", "-Z", "-l=", "-p="),
    "send-keys": ("-R", "-K", "-c="),
    "capture-pane": ("-a", "-C", "-N", "-P", "-q", "-T"),
}


def exact_target(target: str) -> str:
    """tmux's `=name` (match the name exactly, no prefix) is how muxd matches names anyway."""
    session, colon, rest = target.partition(":")
    return session.removeprefix("=") + colon + rest.removeprefix("=")
