"""A question asked in an attached client's status line: y/n, or a line of text to edit with
tmux's (emacs) prompt keys, and for the command prompt a history to go back through."""

from __future__ import annotations

from typing import Any

from muxd.emulator.cell_layout import text_width

_PROMPT_CANCEL = (b"\x1b", b"\x03", b"\x07")  # Escape, C-c, C-g
_LEFT = (b"\x1b[D", b"\x1bOD", b"\x02")  # C-b
_RIGHT = (b"\x1b[C", b"\x1bOC", b"\x06")  # C-f
_HOME = (b"\x1b[H", b"\x1bOH", b"\x1b[1~", b"\x01")  # C-a
_END = (b"\x1b[F", b"\x1bOF", b"\x1b[4~", b"\x05")  # C-e
_DELETE = (b"\x1b[3~", b"\x04")  # C-d
_UP = (b"\x1b[A", b"\x1bOA", b"\x10")  # C-p
_DOWN = (b"\x1b[B", b"\x1bOB", b"\x0e")  # C-n


class Prompt:
    """A question in the status line: a y/n confirmation or a line of text (rename-window, a
    command). `history` (oldest first) is what Up brings back; an answer joins it."""

    def __init__(self, label: str, on_done: Any, *, confirm: bool = False, text: str = "",
                 history: list[str] | None = None) -> None:
        self.label = label
        self.on_done = on_done  # called with the answer (text, or "y")
        self.confirm = confirm
        self.text = text
        self.cursor = len(text)  # in characters
        self.history = history
        self._back = 0  # how far back in the history the text is (0: the line being typed)
        self._typed = text

    def shown(self) -> str:
        return self.label if self.confirm else f"{self.label}{self.text}"

    def cursor_cell(self) -> int | None:
        """The cursor's column in shown() (None: a y/n question shows none)."""
        return None if self.confirm else text_width(self.label + self.text[:self.cursor])

    def key(self, key: bytes) -> tuple[bool, str | None]:
        """(finished, answer); answer None means cancelled."""
        if self.confirm:
            return True, ("y" if key in (b"y", b"Y") else None)
        if key in _PROMPT_CANCEL:
            return True, None
        if key in (b"\r", b"\n"):
            if self.history is not None and self.text and self.text not in self.history[-1:]:
                self.history.append(self.text)
            return True, self.text
        text, at = self.text, self.cursor
        if key in (b"\x7f", b"\x08"):
            text, at = text[:max(at - 1, 0)] + text[at:], max(at - 1, 0)
        elif key in _DELETE:
            text = text[:at] + text[at + 1:]
        elif key == b"\x15":  # C-u
            text, at = "", 0
        elif key == b"\x0b":  # C-k
            text = text[:at]
        elif key == b"\x17":  # C-w: the word before the cursor
            start = len(text[:at].rstrip(" ").rpartition(" ")[0])
            start += 1 if start else 0
            text, at = text[:start] + text[at:], start
        elif key in _LEFT or key in _RIGHT:
            at = max(0, min(len(text), at + (1 if key in _RIGHT else -1)))
        elif key in _HOME or key in _END:
            at = 0 if key in _HOME else len(text)
        elif key in _UP or key in _DOWN:
            text = self._recalled(1 if key in _UP else -1)
            at = len(text)
        elif not key.startswith(b"\x1b") and key >= b" ":
            typed = key.decode("utf-8", "replace")
            text, at = text[:at] + typed + text[at:], at + len(typed)
        self.text, self.cursor = text, at
        return False, None

    def _recalled(self, step: int) -> str:
        """The history entry `step` further back (negative: forward), or the line being typed."""
        history = self.history or []
        if self._back == 0:
            self._typed = self.text
        self._back = max(0, min(len(history), self._back + step))
        return history[-self._back] if self._back else self._typed
