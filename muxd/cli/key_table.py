"""The prefix table as tmux's list-keys prints it: `bind-key -T prefix c new-window`, one line
a key, each with the tmux command that does what the key does in muxd (muxd/daemon/prefix_keys.py
is the table itself)."""

from __future__ import annotations

from muxd.daemon.prefix_keys import BINDINGS, Binding

# (action, argument) -> the tmux command line; an action not here shows as its own name.
_COMMANDS: dict[tuple[str, object], str] = {
    ("new_window", None): "new-window",
    ("next_window", None): "next-window",
    ("previous_window", None): "previous-window",
    ("split", "horizontal"): "split-window -h",
    ("split", "vertical"): "split-window",
    ("select_pane", "up"): "select-pane -U",
    ("select_pane", "down"): "select-pane -D",
    ("select_pane", "left"): "select-pane -L",
    ("select_pane", "right"): "select-pane -R",
    ("zoom", None): "resize-pane -Z",
    ("kill_pane", None): 'confirm-before -p "kill-pane #P? (y/n)" kill-pane',
    ("rename_window", None): 'command-prompt -I "#W" { rename-window "%%" }',
    ("rename_session", None): 'command-prompt -I "#S" { rename-session "%%" }',
    ("detach", None): "detach-client",
    ("list_keys", None): "list-keys -N",
    ("copy_mode", None): "copy-mode",
    ("paste_buffer", None): "paste-buffer -p",
}
_ESCAPED = set("\"#$%';{}\\~")  # key names tmux writes with a backslash


def _command(binding: Binding) -> str:
    if binding.action == "select_window":
        return f"select-window -t :={binding.argument}"
    return _COMMANDS.get((binding.action, binding.argument), binding.action.replace("_", "-"))


def _key(name: str) -> str:
    return "".join("\\" + ch if ch in _ESCAPED else ch for ch in name)


def bind_key_lines(prefix: str, only: str | None = None) -> list[str]:
    """`list-keys -T prefix [KEY]`: the prefix key itself (send-prefix) first, then the table."""
    rows = [(prefix, "send-prefix")] + [(b.name, _command(b)) for b in BINDINGS]
    width = max(len(_key(key)) for key, _ in rows)
    # Arrow keys repeat in tmux (-r); muxd's do not, and say so by the missing flag.
    return [f"bind-key    -T prefix {_key(key):<{width}} {command}" for key, command in rows
            if only is None or key == only]


def note_lines(prefix: str, only: str | None = None) -> list[str]:
    """`list-keys -N [KEY]`: each key after the prefix, with what it does."""
    rows = [(prefix, "Send the prefix key")] + [(b.name, b.help[:1].upper() + b.help[1:]) for b in BINDINGS]
    width = max(len(prefix) + 1 + len(key) for key, _ in rows)
    return [f"{prefix + ' ' + key:<{width}} {what}" for key, what in rows if only is None or key == only]
