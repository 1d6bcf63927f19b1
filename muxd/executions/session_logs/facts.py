"""`TurnFacts`: what an agent's own session log says about one turn (a prompt and everything
the agent did for it), the same shape whichever CLI wrote the log.

Token counts, defined once for every CLI:
- `input_tokens`: every prompt token the model read over the turn's API calls, cached or
  not. Anthropic reports cache reads and writes apart from `input_tokens`, so they are added
  in; OpenAI and Gemini count cached tokens inside their input count already.
- `output_tokens`: every token the model generated, thinking/reasoning included.
- `cache_read_tokens`, `cache_write_tokens`: the part of `input_tokens` read from or written
  to the provider's prompt cache (None where the log has no such count).
- `tokens_used` = `input_tokens` + `output_tokens`: what the turn cost in tokens. It equals
  Codex's own `total_tokens` and Gemini's `total`; Claude Code shows no total on screen.
Each API call is counted once, however many log lines repeat its usage.

`call_tokens` keeps each call's counts apart (prices are per request: a long-context tier
applies to one request's prompt, not to a turn's sum), only where they are the API's own usage
(Claude Code, Codex, Gemini): Aider's are its rounded count, not priced.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import msgspec


class TurnError(msgspec.Struct, frozen=True, kw_only=True):
    type: str     # "overloaded", "rate_limited", "server_error", "api_error", … (detectors' error_kind)
    message: str  # the CLI's own words


class CallTokens(msgspec.Struct, frozen=True, kw_only=True):
    """One API call's usage, counted as in TurnFacts (`input` holds the cached tokens)."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    model: str | None = None  # where the log names each call's model (a subagent's, Gemini's routing)


class TurnFacts(msgspec.Struct, frozen=True, kw_only=True):
    prompt: str | None = None            # the user message that started the turn
    response: str | None = None          # the assistant's text blocks after the prompt, "\n\n"-joined
    input_tokens: int | None = None      # see the module docstring for what each count holds
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    tokens_used: int | None = None       # input_tokens + output_tokens
    context_used: int | None = None      # the conversation as the turn ends: its last call's input + output
    context_max: int | None = None       # the model's context window, where the log names it (Codex)
    api_calls: int = 0                   # model requests whose usage the log recorded
    call_tokens: list[CallTokens] = []   # each request's usage, where it is the API's (see above)
    tool_calls: list[str] = []           # "Bash(mkdir -p demo)", in the order the model made them
    files_written: list[str] = []        # paths a Write/Edit/apply_patch tool wrote (successfully)
    session_id: str | None = None        # the CLI's own session id (what its resume command takes)
    model: str | None = None
    error: TurnError | None = None       # the turn ended on this API error
    complete: bool = False               # the turn is over in the log: its final answer (or the error) is there
    interrupted: bool = False            # the person interrupted the turn (Esc / Ctrl-C)


@dataclass
class TokenTally:
    """Sums the usage of a turn's API calls; `None` counts stay None until some call has one."""

    input: int | None = None
    output: int | None = None
    cache_read: int | None = None
    cache_write: int | None = None
    calls: int = 0
    last_context: int | None = None  # the last call's input + output
    exact: bool = True               # the counts are the API's usage (not Aider's rounded ones)
    per_call: list[CallTokens] = field(default_factory=list)

    def add(self, input: int | None, output: int | None, cache_read: int | None = None,
            cache_write: int | None = None, model: str | None = None) -> None:
        if input is not None or output is not None:
            self.last_context = (input or 0) + (output or 0)
        self.input = _plus(self.input, input)
        self.output = _plus(self.output, output)
        self.cache_read = _plus(self.cache_read, cache_read)
        self.cache_write = _plus(self.cache_write, cache_write)
        self.calls += 1
        if self.exact and (input is not None or output is not None):
            self.per_call.append(CallTokens(input=input or 0, output=output or 0, cache_read=cache_read or 0,
                                            cache_write=cache_write or 0, model=model))

    def fields(self) -> dict[str, int | list[CallTokens] | None]:
        """TurnFacts keyword arguments for these counts."""
        used = None if self.input is None and self.output is None else (self.input or 0) + (self.output or 0)
        return {"input_tokens": self.input, "output_tokens": self.output, "cache_read_tokens": self.cache_read,
                "cache_write_tokens": self.cache_write, "tokens_used": used, "api_calls": self.calls,
                "context_used": self.last_context, "call_tokens": self.per_call}


def _plus(total: int | None, value: int | None) -> int | None:
    if value is None:
        return total
    return (total or 0) + value


def count(value: object) -> int | None:
    """A token count from a log field: a non-negative int, else None (missing, null, garbage)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value
