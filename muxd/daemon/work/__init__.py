"""Work on top of panes: the execution history wired to live panes, and the task queue."""
