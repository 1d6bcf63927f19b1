"""The muxd wire protocol: length-prefixed msgpack messages (see messages.py)."""
