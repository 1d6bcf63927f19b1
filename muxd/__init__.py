"""muxd: a terminal multiplexer daemon that understands the AI coding agents in its panes."""

__version__ = "0.1.0"
