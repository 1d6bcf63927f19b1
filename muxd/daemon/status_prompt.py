"""A question asked in an attached client's status line: y/n, or a line of text to edit."""

from __future__ import annotations

from typing import Any

_PROMPT_CANCEL = (b"\x1b", b"\x03", b"\x07")  # Escape, C-c, C-g


class Prompt:
    """A question in the status line: a y/n confirmation or a line of text (rename-window)."""

    def __init__(self, label: str, on_done: Any, *, confirm: bool = False, text: str = "") -> None:
        self.label = label
        self.on_done = on_done  # called with the answer (text, or "y")
        self.confirm = confirm
        self.text = text

    def shown(self) -> str:
        return self.label if self.confirm else f"{self.label}{self.text}"

    def key(self, key: bytes) -> tuple[bool, str | None]:
        """(finished, answer); answer None means cancelled."""
        if self.confirm:
            return True, ("y" if key in (b"y", b"Y") else None)
        if key in _PROMPT_CANCEL:
            return True, None
        if key in (b"\r", b"\n"):
            return True, self.text
        if key in (b"\x7f", b"\x08"):
            self.text = self.text[:-1]
        elif key == b"\x15":  # C-u
            self.text = ""
        elif not key.startswith(b"\x1b") and key >= b" ":
            self.text += key.decode("utf-8", "replace")
        return False, None
