"""What the agents' own session logs say about a turn: exact answers, token usage, tool
inputs and session ids, where the screen only gives what fits on it.

    path = locate("claude", pane.pid)           # None: no log (yet), or not ours to read
    cursor = SessionLogCursor(path); cursor.mark()   # when the execution starts
    facts = cursor.read_turn()                   # TurnFacts of what was appended since

What each CLI keeps (versions installed by .ci/install-agents, run against the fakes):
- Claude Code 2.1.330: `<CLAUDE_CONFIG_DIR or ~/.claude>/projects/<cwd, each non-alphanumeric
  character as "->/<session id>.jsonl`, appended a line at a time (opened per write, not held
  open): prompts, each assistant content block with the API call's `usage`, tool calls with
  their inputs and results, API errors, a `turn_duration` line at the end of a turn.
  See claude.py.
- Codex CLI 0.169: `<CODEX_HOME or ~/.codex>/sessions/YYYY/MM/DD/rollout-<local time>-<thread
  id>.jsonl`, held open by its app-server process (a child of the CLI): prompts, answers,
  function calls with JSON arguments, file changes, per-response token usage, turn ends and
  errors. See codex.py.
- Gemini CLI 0.61: `<GEMINI_CLI_HOME or HOME>/.gemini/tmp/<project>/chats/session-<time>-<id
  prefix>.jsonl` (`<project>` from `.gemini/projects.json`, by cwd): the
  session id in its header, prompts, answers with per-call `tokens` (the API's usage),
  `model`, tool calls with arguments and status, API errors. Usable: see gemini.py.
  (`tmp/<project>/logs.json` holds the prompts only.)
- Aider 0.86: `.aider.chat.history.md` in its root (the git root, else the cwd): prompts,
  answers and Aider's own lines, among them `Tokens: N sent, M received.` (Aider's own
  count, not the API's usage, rounded past 1000), `Applied edit to <file>` and API errors.
  No session id, no tool calls. Usable for answers and files: see aider.py.
  (`.aider.input.history` holds the prompts only.)
- Qwen Code 0.15: `<QWEN_HOME or ~/.qwen>/projects/<cwd, each non-alphanumeric as "-">/chats/
  <session id>.jsonl`: prompts, answers with each request's `usageMetadata` and `model`, tool
  calls with arguments and results, API errors (as UI telemetry). See qwen.py.
- pi 0.73: `<PI_CODING_AGENT_DIR or ~/.pi/agent>/sessions/--<cwd>--/<time>_<id>.jsonl`: the
  session id in its header, prompts, answers with each request's usage and model, tool calls
  with arguments and results, failed requests with their error. See pi.py.
- Cline 3.0.65: its sessions database `<CLINE_DATA_DIR or ~/.cline/data>/db/sessions.db`
  (SQLite, opened read-only) names the session each CLI process runs; the session's
  `sessions/<id>/<id>.messages.json`, rewritten whole, holds prompts, answers with each
  request's usage and model, tool calls with their inputs and results, failed requests.
  See cline_store.py and cline.py.
- Kilo 7.7.9: no file per session; opencode's store moved into SQLite,
  `<XDG_DATA_HOME or ~/.local/share>/kilo/kilo.db` (held open by the CLI, read read-only):
  the cwd's session, its messages (model, finish, errors) and their parts (text, tool calls
  with input and status, each request's tokens). Read by store_cursor.py; see kilo.py.

A pane's process is the CLI itself (Claude Code) or a node wrapper whose descendants do the
work (Codex: the native binary, then its app-server); `locate` searches the whole tree.

Modules: facts.py (TurnFacts), locate.py (/proc → path), cursor.py (offsets, bounded reads;
a message count for a log rewritten whole), store_cursor.py (a database's rows since a time),
one parser per CLI, each a pure `parse_turn(data: bytes) -> TurnFacts`.
"""

from muxd.executions.session_logs.cursor import PARSERS, READ_MAX_BYTES, SessionLogCursor
from muxd.executions.session_logs.facts import TurnError, TurnFacts
from muxd.executions.session_logs.locate import AGENT_TYPES, agent_of_log, locate

__all__ = ["AGENT_TYPES", "PARSERS", "READ_MAX_BYTES", "SessionLogCursor", "TurnError", "TurnFacts",
           "agent_of_log", "locate"]
