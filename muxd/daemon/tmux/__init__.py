"""tmux interop: the shim's launcher, tmux's other options, watching running tmux servers."""
