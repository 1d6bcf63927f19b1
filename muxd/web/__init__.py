"""`muxd web`: a loopback web view of the agents, a client of the daemon like `muxd mcp`.

Each browser logs in with a muxd token; every daemon request for that browser goes through a
connection greeted with that token, so the daemon's tiers, scopes, rate limits and audit apply
to the browser exactly as to an MCP client or the CLI (sessions.py). Nothing here decides who
may see or do what: the daemon does.
"""
