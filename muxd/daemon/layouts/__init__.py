"""Window layouts: the split tree, tmux's layout sets and strings, panes changing places."""
