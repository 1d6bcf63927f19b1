"""The keys that answer an agent's yes/no confirmation, as its dialog takes them: what `muxd top`'s
`y` and `n` (and any other "answer it for me") send to the pane.

An `AgentState` in, `send-keys` key names out (to be sent one write each, as a person types
them); BadRequest when the state asks no yes/no, or the agent's keys are not known. Claude's
Enter and Escape, Codex's and Gemini's Enter and Aider's y + Enter are what the real CLIs'
tests (tests/test_agents_real_*.py) press
(Qwen Code's dialog is Gemini's); Codex's and Gemini's Escape is their dialogs' own
"(esc)" on the no; opencode's keys come from its public material only (no real opencode screen
was captured for muxd).

- Claude Code, Codex, Gemini CLI and opencode draw a dialog whose first option, highlighted
  when it opens, is the one-time yes ("1. Yes", "1. Yes, proceed (y)", "● 1. Allow once",
  "Allow once"): Enter takes it. Escape is their no ("Esc to cancel", "No, … (esc)").
  Enter rather than the option's digit: a digit alone answers at once in the real CLIs, and an
  Enter after it would land on whatever they draw next, perhaps the next dialog.
- Aider asks on its input line (`Create new file? (Y)es/(N)o [Yes]:`): `y` or `n`, then Enter.
- An agent added by a manifest: the keys its `[confirm]` table names (the manifest files are
  read for it, as a server reads them at its start).
- Cline's dialog answers a key alone (`[y] Approve   [n] Deny`): `y` or `n`.
- Kilo (a manifest) draws opencode's dialog: Enter takes "Allow once", its first button; its
  Escape opens "Reject permission" (a message to send with the no), which Enter confirms empty,
  as its manifest's `[confirm]` says.
"""

from __future__ import annotations

import re

from muxd.detectors._lazy_re import lazy_compile
from muxd.detectors.state import AgentState
from muxd.errors import BadRequest

DIALOG_AGENTS = frozenset({"claude", "codex", "gemini", "opencode", "qwen"})
LINE_AGENTS = frozenset({"aider"})
KEY_AGENTS = frozenset({"cline"})  # a key alone answers, no Enter
# An option that says yes once: "1. Yes", "Yes, proceed (y)", "● 1. Allow once", "Approve".
_YES_OPTION = lazy_compile(r"^\W*(?:\d+\.\s*)?(?:yes|allow|approve|proceed)\b", re.IGNORECASE)


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
    manifest_keys = None if agent in DIALOG_AGENTS else _manifest_keys(agent, "yes" if yes else "no")
    if manifest_keys is not None:
        return list(manifest_keys)
    if agent not in DIALOG_AGENTS:
        raise BadRequest(f"muxd does not know how {agent or 'this program'} takes a yes or no: answer it in "
                         f"{pane}", pane_id=state.pane_id)
    if not yes:
        return ["Escape"]
    options = state.confirmation.options
    if options and not _YES_OPTION.match(options[0]):
        raise BadRequest(f"{pane}'s dialog opens on {options[0]!r}, not a yes: answer it in its pane",
                         pane_id=state.pane_id)
    return ["Enter"]


def _manifest_keys(agent: str | None, answer: str) -> tuple[str, ...] | None:
    """The keys the agent's manifest gives for `answer` ("yes" or "no"), if it has a manifest
    that says (the last one read of that name, as the daemon loads them)."""
    from muxd.detectors.registry import load_manifests, manifest_dirs

    keys = None
    for directory in manifest_dirs():
        for detector in load_manifests(directory, quiet=True)[0]:
            if detector.name == agent:
                keys = getattr(detector, "manifest").confirm_keys.get(answer)
    return keys


# An option that says no: "3. No", "No, suggest changes (esc)", "Reject", "Deny".
_NO_OPTION = lazy_compile(r"^\W*(?:\d+\.\s*)?(?:no|reject|deny|cancel)\b", re.IGNORECASE)
_NUMBERED_OPTION = lazy_compile(r"^\W*(\d)\.\s")


def option_keys(state: AgentState, index: int) -> list[str]:
    """The send-keys key names that choose option `index` of what `state` asks (the web view's
    answer buttons): its first (yes) option and its no as `confirmation_keys` sends them; another
    numbered option of a dialog by its digit (which the CLIs take at once); BadRequest otherwise."""
    asked = state.confirmation
    options = asked.options if asked is not None else []
    if not 0 <= index < len(options):
        raise BadRequest(f"{state.pane_id or 'the pane'} shows no option {index + 1}: look again",
                         pane_id=state.pane_id)
    option = options[index]
    if state.activity.state == "AwaitingConfirmation" and (index == 0 or _NO_OPTION.match(option)):
        return confirmation_keys(state, index == 0)
    numbered = _NUMBERED_OPTION.match(option)
    if numbered is None or state.agent_type not in DIALOG_AGENTS:
        raise BadRequest(f"muxd cannot choose {option!r} for you: answer it in {state.pane_id or 'the pane'}",
                         pane_id=state.pane_id)
    return [numbered[1]]
