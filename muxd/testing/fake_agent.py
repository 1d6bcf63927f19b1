"""`python -m muxd.testing.fake_agent [claude|codex|gemini|aider|mini]`: the fake agent CLIs of
`muxd.testing.fake_agents` (Claude Code when no agent is named)."""

from muxd.testing.fake_agents import main

if __name__ == "__main__":
    raise SystemExit(main())
