"""`normalise_answer`: an answer's text with the differences a screen cannot keep taken out,
so that what a CLI showed and what its model streamed compare equal.

What a screen loses, and so what this drops on both sides:
- line breaks inside a paragraph: every CLI wraps at its own width (and indents the rest),
  so a paragraph is one line, its runs of whitespace one space, its ends stripped;
- how many blank rows part two paragraphs (or two answer blocks of one turn): one blank line;
- inline markdown the CLIs draw as styles: `code`, **bold**, __bold__, *emphasis* lose
  their markers;
- list bullets: `* item`, `+ item` and a drawn `• item` are all `- item`.

What it does not restore: code fences and headings (drawn differently by each CLI), a
word the CLI broke across rows because it was wider than the pane (a long path or URL comes
back with a space at the break), and a numbered list's dot where a CLI drops it.
"""

from __future__ import annotations

import re

_BLANK_LINES = re.compile(r"\n[ \t\r\f\v]*\n\s*")
_BULLET = re.compile(r"^[ \t]*[*+•][ \t]+", re.MULTILINE)
# Delimiters around a run that starts and ends with a non-blank: "**a b**" yes, "2 * 3 * 4" no.
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_EMPHASIS = re.compile(r"(?<![\w*])\*(?=[^\s*])([^*\n]*?[^\s*])\*(?![\w*])")


def normalise_answer(text: str) -> str:
    """`text` as paragraphs parted by one blank line, each on one line with single spaces,
    inline markdown markers and bullet styles taken out (see the module docstring)."""
    # (Most answers hold no marker: each pass is looked for first, a scan of the text in C.)
    stars = "*" in text
    if stars or "+" in text or "•" in text:
        text = _BULLET.sub("- ", text)
    if "`" in text:
        text = _CODE_SPAN.sub(r"\1", text)
    if stars or "__" in text:
        text = _STRONG.sub(r"\2", text)
    if stars:
        text = _EMPHASIS.sub(r"\1", text)
    # (str.split() parts at the runs of what \s matches, and drops them at the ends.)
    paragraphs = (" ".join(part.split()) for part in _BLANK_LINES.split(text))
    return "\n\n".join(part for part in paragraphs if part)
