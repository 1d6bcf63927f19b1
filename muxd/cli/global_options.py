"""muxd's own options before the command's name (`muxd -L NAME --token-file F ls`): where that
name is in a command line, read without a parser (the CLI's fast path and its parsers both)."""

from __future__ import annotations

TYPE_CHECKING = False  # typing only for the type checker: see cli/table.py
if TYPE_CHECKING:
    from collections.abc import Sequence

# Global options that take a value: the word after one is never the command.
VALUE_OPTIONS = ("-L", "-H", "-f", "--token", "--token-file")


def past_options(argv: Sequence[str]) -> int:
    """The index of the first word of `argv` that is not one of muxd's options taking a value
    (nor that value): the command's name, when the line is as usual."""
    at = 0
    while at < len(argv):
        word = argv[at]
        if word in VALUE_OPTIONS:
            at += 2
        elif word.startswith(("-L", "-H", "-f", "--token=", "--token-file=")):  # the value attached to the option
            at += 1
        else:
            break
    return min(at, len(argv))
