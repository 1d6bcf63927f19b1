"""tmux options muxd has no use for, answered as tmux 3.3a answers them by default.

Tools probe and set them on their way to what they need (Claude Code's teammate backend reads
`focus-events` and `#{allow-passthrough}`, colours its panes with `pane-border-style`…): `muxd
tmux` takes `set-option` of one without acting on it and shows its tmux default, and formats
expand `#{focus-events}` as tmux does. Options muxd has (`set-option`'s table) never get here.
"""

from __future__ import annotations

# name -> tmux 3.3a's default, as `show-options -v` prints it.
TMUX_DEFAULTS = {
    "aggressive-resize": "off", "allow-passthrough": "off", "allow-rename": "off",
    "automatic-rename": "on", "clock-mode-colour": "blue", "copy-mode-match-style": "bg=cyan,fg=black",
    "destroy-unattached": "off", "detach-on-destroy": "on", "display-panes-time": "1000",
    "display-time": "750", "escape-time": "500", "extended-keys": "off", "focus-events": "off",
    "main-pane-height": "24", "main-pane-width": "80", "mode-keys": "emacs", "mode-style": "bg=yellow,fg=black",
    "monitor-activity": "off", "monitor-bell": "on", "pane-active-border-style": "#{?pane_in_mode,fg=yellow,#{?synchronize-panes,fg=red,fg=green}}",
    "pane-base-index": "0", "pane-border-format": "#{?pane_active,#[reverse],}#{pane_index}#[default] \"#{pane_title}\"",
    "pane-border-indicators": "colour", "pane-border-lines": "single", "pane-border-status": "off",
    "pane-border-style": "default", "renumber-windows": "off", "repeat-time": "500", "set-clipboard": "external",
    "set-titles": "off", "status-interval": "15", "status-justify": "left", "status-keys": "emacs",
    "status-left": "[#{session_name}] ", "status-position": "bottom", "status-right-length": "40",
    "status-style": "bg=green,fg=black", "synchronize-panes": "off", "visual-activity": "off",
    "visual-bell": "off", "window-active-style": "default", "window-size": "latest", "window-style": "default",
    "wrap-search": "on",
}
# Flag options: a format shows them as 1 or 0, as tmux's does.
_FLAGS = {name for name, value in TMUX_DEFAULTS.items() if value in ("on", "off")} - {"set-clipboard"}
OPTION_COMMANDS = ("set-option", "set-window-option", "show-options", "show-window-options")


def format_defaults() -> dict[str, str]:
    """These options as format variables (`#{focus-events}` is 0), with `status` muxd shows."""
    values = {name: ("1" if value == "on" else "0") if name in _FLAGS else value
              for name, value in TMUX_DEFAULTS.items()}
    values.setdefault("status", "on")
    return values


def tmux_only_option(command: str, words: list[str]) -> str | None:
    """What `command words…` prints when it sets or shows one of these options (None: it names
    another, for muxd's own set-option and show-options to answer)."""
    positionals: list[str] = []
    show_value_only = False
    at = 0
    while at < len(words):
        word = words[at]
        if word == "--":
            positionals += words[at + 1:]
            break
        if word.startswith("-") and len(word) > 1 and not positionals:
            letters = word[1:]
            if "t" in letters:  # -t TARGET, -wt TARGET, -tTARGET: the rest is the target
                at += 1 if letters.endswith("t") else 0
                letters = letters[:letters.index("t")]
            show_value_only = show_value_only or "v" in letters
        else:
            positionals.append(word)
        at += 1
    if not positionals or positionals[0] not in TMUX_DEFAULTS:
        return None
    name = positionals[0]
    if command.startswith("set-"):
        return ""
    return f"{TMUX_DEFAULTS[name]}\n" if show_value_only else f"{name} {_quoted(TMUX_DEFAULTS[name])}\n"


def _quoted(value: str) -> str:
    if value and all(ch.isalnum() or ch in "-_=,.:[]/" for ch in value):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
