"""Scripted fake model servers for driving the real agent CLIs offline.

    from muxd.testing.fake_models import AnthropicFake, Say, Think
    fake = AnthropicFake([[Think(10), Say("Hello there.")]])
    with fake as port:
        ...  # point the CLI at http://127.0.0.1:{port}; fake.requests records what it sent
"""

from muxd.testing.fake_models.anthropic import AnthropicFake
from muxd.testing.fake_models.gemini import GeminiFake
from muxd.testing.fake_models.openai_chat import OpenAIChatFake
from muxd.testing.fake_models.openai_responses import OpenAIResponsesFake
from muxd.testing.fake_models.script import Call, Fail, Pause, RecordedRequest, Say, Script, Step, Think, Turn

__all__ = ["AnthropicFake", "Call", "Fail", "GeminiFake", "OpenAIChatFake", "OpenAIResponsesFake", "Pause",
           "RecordedRequest", "Say", "Script", "Step", "Think", "Turn"]
