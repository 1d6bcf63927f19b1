"""`muxd mcp`: an MCP server (SDK 2.x) that is a client of the daemon.

Named `mcp_server`, never `mcp`: a package called `mcp` would shadow the SDK.
"""
