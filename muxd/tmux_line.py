"""A tmux command line, read as tmux reads it: global options, then commands separated by `;`.

Pure (words in, a `TmuxLine` out), for `muxd tmux` (cli/tmux_commands.py) and the lines the
daemon's command prompt and key bindings run. Also tmux 3.3a's command names and aliases, with
its lookup: an exact name or alias, else a unique prefix.
"""

from __future__ import annotations

from muxd.errors import BadRequest

# tmux 3.3a's commands and their aliases (cmd.c's table).
TMUX_COMMANDS: dict[str, str | None] = {
    "attach-session": "attach", "bind-key": "bind", "break-pane": "breakp", "capture-pane": "capturep",
    "choose-buffer": None, "choose-client": None, "choose-tree": None, "clear-history": "clearhist",
    "clear-prompt-history": "clearphist", "clock-mode": None, "command-prompt": None,
    "confirm-before": "confirm", "copy-mode": None, "customize-mode": None, "delete-buffer": "deleteb",
    "detach-client": "detach", "display-menu": "menu", "display-message": "display",
    "display-popup": "popup", "display-panes": "displayp", "find-window": "findw", "has-session": "has",
    "if-shell": "if", "join-pane": "joinp", "kill-pane": "killp", "kill-server": None,
    "kill-session": None, "kill-window": "killw", "last-pane": "lastp", "last-window": "last",
    "link-window": "linkw", "list-buffers": "lsb", "list-clients": "lsc", "list-commands": "lscm",
    "list-keys": "lsk", "list-panes": "lsp", "list-sessions": "ls", "list-windows": "lsw",
    "load-buffer": "loadb", "lock-client": "lockc", "lock-server": "lock", "lock-session": "locks",
    "move-pane": "movep", "move-window": "movew", "new-session": "new", "new-window": "neww",
    "next-layout": "nextl", "next-window": "next", "paste-buffer": "pasteb", "pipe-pane": "pipep",
    "previous-layout": "prevl", "previous-window": "prev", "refresh-client": "refresh",
    "rename-session": "rename", "rename-window": "renamew", "resize-pane": "resizep",
    "resize-window": "resizew", "respawn-pane": "respawnp", "respawn-window": "respawnw",
    "rotate-window": "rotatew", "run-shell": "run", "save-buffer": "saveb", "select-layout": "selectl",
    "select-pane": "selectp", "select-window": "selectw", "send-keys": "send", "send-prefix": None,
    "server-access": None, "set-buffer": "setb", "set-environment": "setenv", "set-hook": None,
    "set-option": "set", "set-window-option": "setw", "show-buffer": "showb",
    "show-environment": "showenv", "show-hooks": None, "show-messages": "showmsgs",
    "show-options": "show", "show-prompt-history": "showphist", "show-window-options": "showw",
    "source-file": "source", "split-window": "splitw", "start-server": "start",
    "suspend-client": "suspendc", "swap-pane": "swapp", "swap-window": "swapw",
    "switch-client": "switchc", "unbind-key": "unbind", "unlink-window": "unlinkw", "wait-for": "wait",
}

# tmux's global options (tmux.c): those that take a value, and those that do not.
_VALUE_OPTIONS = set("cfLST")
_FLAG_OPTIONS = set("2CDluNvV")


class TmuxLine:
    """What one `tmux …` invocation asks for."""

    def __init__(self) -> None:
        self.options: dict[str, str] = {}      # global options with a value: -L NAME, -S PATH, -f FILE…
        self.flags: set[str] = set()           # global flags: V, C, u…
        self.commands: list[list[str]] = []    # each command's words, its name first


def parse_line(words: list[str]) -> TmuxLine:
    """Global options (getopt: `-Lname`, `-L name`, `-2u`), then the command sequence."""
    line = TmuxLine()
    at = 0
    while at < len(words):
        word = words[at]
        if word == "--":
            at += 1
            break
        if not word.startswith("-") or word == "-":
            break
        letters = word[1:]
        for offset, letter in enumerate(letters):
            if letter in _VALUE_OPTIONS:
                value = letters[offset + 1:]
                if not value:
                    at += 1
                    if at >= len(words):
                        raise BadRequest(f"option requires an argument -- {letter}")
                    value = words[at]
                line.options[letter] = value
                break
            if letter not in _FLAG_OPTIONS:
                raise BadRequest(f"unknown option -- {letter}")
            line.flags.add(letter)
        at += 1
    line.commands = split_commands(words[at:])
    return line


def split_commands(words: list[str]) -> list[list[str]]:
    """Commands separated by a `;` word, or a word ending in an unescaped `;`; `\\;` at a word's
    end is a literal `;`. Empty commands are dropped."""
    commands: list[list[str]] = [[]]
    for word in words:
        if word.endswith("\\;"):
            commands[-1].append(word[:-2] + ";")
        elif word.endswith(";"):
            if word[:-1]:
                commands[-1].append(word[:-1])
            commands.append([])
        else:
            commands[-1].append(word)
    return [command for command in commands if command]


def exact_command(word: str) -> str | None:
    """tmux's name of the command `word` is the name or the alias of (not a prefix); None if none."""
    if word in TMUX_COMMANDS:
        return word
    return next((name for name, alias in TMUX_COMMANDS.items() if alias == word), None)


def find_command(word: str) -> str:
    """tmux's name of the command `word` names: a name, an alias, or a unique prefix of a name;
    BadRequest with tmux's words otherwise."""
    exact = exact_command(word)
    if exact is not None:
        return exact
    matches = [name for name in TMUX_COMMANDS if name.startswith(word)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise BadRequest(f"ambiguous command: {word}, could be: {', '.join(matches)}")
    raise BadRequest(f"unknown command: {word}")
