"""The daemon side of attached clients (`muxd attach`): keys, prompts, copy mode, status line."""
