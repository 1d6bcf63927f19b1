"""How a CLI command ends when the reader of its output left (`muxd ls | head -1`): shared by
the full CLI (cli/main.py) and the tmux shim's fast path (tmux_fast_path.py)."""

from __future__ import annotations

import sys

CLOSED_PIPE_STATUS = 141    # 128 + SIGPIPE: what the shell reports for `seq 1e9 | head -1`


def closed_pipe() -> int:
    """The reader left (`muxd ls | head`): stop quietly, as a program killed by SIGPIPE does."""
    import os  # only then: a tmux shim call imports no os (muxd/_environ.py)

    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return CLOSED_PIPE_STATUS
