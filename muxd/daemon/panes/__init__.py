"""Sessions, windows and panes, and the programs that run in them: PTYs, screens, detection."""
