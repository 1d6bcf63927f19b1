"""The names of the shells whose processes the detectors and the history recognise."""

from __future__ import annotations

SHELLS = frozenset({"bash", "sh", "dash", "zsh", "fish", "ksh", "mksh", "tcsh", "csh", "ash", "busybox", "nu",
                    "xonsh"})
