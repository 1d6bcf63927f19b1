"""Real tmux as the oracle for layout geometry: a private server (`tmux -L NAME -f /dev/null`)
whose windows run `sleep` panes, driven by the same commands muxd gets, read back as tmux's
#{window_layout}. Always `close()` it (kills that server only).
"""

from __future__ import annotations

import shutil
import subprocess
import uuid

from muxd.testing.patience import stretched

TMUX_TIMEOUT_S = 10.0
PANE_PROGRAM = "sleep 600"


class TmuxOracle:
    def __init__(self) -> None:
        if shutil.which("tmux") is None:
            raise RuntimeError("tmux is the layout oracle and is not installed")
        self.base = ["tmux", "-L", f"muxd-oracle-{uuid.uuid4().hex[:10]}", "-f", "/dev/null"]
        # A session that stays, so killing a test's last window never ends the server under the next.
        self.run("new-session", "-d", "-s", "oracle-keep", PANE_PROGRAM)

    def run(self, *args: str) -> str:
        """One tmux command line (commands may be chained with ";"); its output."""
        result = subprocess.run([*self.base, *args], check=False, capture_output=True, text=True, timeout=stretched(TMUX_TIMEOUT_S))
        if result.returncode != 0:
            raise AssertionError(f"tmux {' '.join(args)} failed: {result.stderr.strip()}")
        return result.stdout

    def new_window(self, columns: int, lines: int) -> int:
        """A new session of one pane in a `columns` x `lines` window; the pane's number (%N)."""
        out = self.run("new-session", "-d", "-x", str(columns), "-y", str(lines), "-P", "-F", "#{pane_id}",
                       PANE_PROGRAM)
        return int(out.strip()[1:])

    def split(self, pane: int, *flags: str) -> int:
        out = self.run("split-window", *flags, "-d", "-P", "-F", "#{pane_id}", "-t", f"%{pane}", PANE_PROGRAM)
        return int(out.strip()[1:])

    def layout(self, pane: int) -> str:
        return self.run("display-message", "-p", "-t", f"%{pane}", "#{window_layout}").strip()

    def close(self) -> None:
        subprocess.run([*self.base, "kill-server"], check=False, capture_output=True, timeout=stretched(TMUX_TIMEOUT_S))
