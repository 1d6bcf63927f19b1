"""The keys that answer an agent's yes/no confirmation, as its dialog takes them: what `muxd top`'s
`y` and `n` (and any other "answer it for me") send to the pane.

Pure: an `AgentState` in, `send-keys` key names out (to be sent one write each, as a person
types them); BadRequest when the state asks no yes/no. Claude's Enter and Escape, Codex's and
Gemini's Enter and Aider's y + Enter are what the real CLIs' tests (tests/test_agents_real_*.py)
press; Codex's and Gemini's Escape is their dialogs' own "(esc)" on the no; opencode's keys
come from its public material only (no real opencode screen was captured for muxd).

- Claude Code, Codex, Gemini CLI and opencode draw a dialog whose first option, highlighted
  when it opens, is the one-time yes ("1. Yes", "1. Yes, proceed (y)", "● 1. Allow once",
  "Allow once"): Enter takes it. Escape is their no ("Esc to cancel", "No, … (esc)").
  Enter rather than the option's digit: a digit alone answers at once in the real CLIs, and an
  Enter after it would land on whatever they draw next, perhaps the next dialog.
- Aider asks on its input line (`Create new file? (Y)es/(N)o [Yes]:`): `y` or `n`, then Enter.
- Cline's dialog answers a key alone (`[y] Approve   [n] Deny`): `y` or `n`.
- Kilo draws opencode's dialog: Enter takes "Allow once", its first button; its Escape opens
  "Reject permission" (a message to send with the no), which Enter confirms empty.
"""

from __future__ import annotations

import re

from muxd.detectors.state import AgentState
from muxd.errors import BadRequest

DIALOG_AGENTS = frozenset({"claude", "codex", "gemini", "opencode", "kilo"})
LINE_AGENTS = frozenset({"aider"})
KEY_AGENTS = frozenset({"cline"})  # a key alone answers, no Enter
NO_KEYS = {"kilo": ["Escape", "Enter"]}  # a dialog agent's no, where Escape alone is not it
# An option that says yes once: "1. Yes", "Yes, proceed (y)", "● 1. Allow once", "Approve".
_YES_OPTION = re.compile(r"^\W*(?:\d+\.\s*)?(?:yes|allow|approve|proceed)\b", re.IGNORECASE)


def confirmation_keys(state: AgentState, yes: bool) -> list[str]:
    """The send-keys key names that answer `state`'s confirmation with yes (or no)."""
    pane = state.pane_id or "the pane"
    agent = state.agent_type
    if state.activity.state != "AwaitingConfirmation" or state.confirmation is None:
        asked = "asks a question, not yes or no" if state.activity.state == "AwaitingInput" else \
            f"is not waiting for a yes or no (it is {state.activity.state})"
        raise BadRequest(f"{pane} {asked}: answer it in its pane", pane_id=state.pane_id)
    if agent in LINE_AGENTS:
        return ["y" if yes else "n", "Enter"]
    if agent in KEY_AGENTS:
        return ["y" if yes else "n"]
    if agent not in DIALOG_AGENTS:
        raise BadRequest(f"muxd does not know how {agent or 'this program'} takes a yes or no: answer it in "
                         f"{pane}", pane_id=state.pane_id)
    if not yes:
        return list(NO_KEYS.get(agent or "", ["Escape"]))
    options = state.confirmation.options
    if options and not _YES_OPTION.match(options[0]):
        raise BadRequest(f"{pane}'s dialog opens on {options[0]!r}, not a yes: answer it in its pane",
                         pane_id=state.pane_id)
    return ["Enter"]
