"""A third-party detector, installed as its own distribution (see the .dist-info beside it)."""

from muxd.detectors.state import Detection


class DemoDetector:
    name = "demo"

    def identify(self, ctx):
        return 0.9 if any("DEMO-AGENT" in line for line in ctx.lines) else 0.0

    def detect(self, ctx, prev):
        busy = any("DEMO-AGENT working" in line for line in ctx.lines)
        return Detection(agent_type="demo", state="Thinking" if busy else "Idle", rule="demo-banner",
                         description="working" if busy else None)
