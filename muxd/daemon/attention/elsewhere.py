"""The agents elsewhere that need you: the counts a status line shows (`2 waiting · 1 failed`)
and the format variables that place them (#{agents_waiting}, #{agent_attention}…).

"Elsewhere" is every session but the one a client shows: what is in front of you is on your
screen already. Waiting, limited and failed agents are counted (they are blocked on a person);
finished ones are not (an agent at its prompt blocks nobody): they show as their window's `+`
flag and in #{agents_finished}. Pure and light: the CLI's formats import it too.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing only for the type checker: collections costs a shim's format call ~2 ms
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

COUNTED = ("waiting", "limited", "failed")  # the kinds in #{agent_attention}, in this order
ALL_NEEDS = (*COUNTED, "finished")
SEPARATOR = " · "


def attention_text(counts: Mapping[str, int]) -> str:
    """`2 waiting · 1 failed`: the counted kinds there are; "" when none."""
    return SEPARATOR.join(f"{counts[kind]} {kind}" for kind in COUNTED if counts.get(kind))


def elsewhere(needs_by_session: Iterable[tuple[str, Mapping[str, int]]], here: str | None) -> dict[str, int]:
    """The needs of every session but `here` (a session id), added up by kind."""
    total: dict[str, int] = {}
    for session_id, needs in needs_by_session:
        if session_id != here:
            for kind, count in needs.items():
                total[kind] = total.get(kind, 0) + count
    return total


def attention_variables(counts: Mapping[str, int]) -> dict[str, str]:
    """#{agent_attention} and #{agents_waiting} / _limited / _failed / _finished."""
    variables = {f"agents_{kind}": str(counts.get(kind, 0)) for kind in ALL_NEEDS}
    variables["agent_attention"] = attention_text(counts)
    return variables


def status_right(attention: str, agent_status: str) -> str:
    """muxd's default status-right: the count elsewhere, then the active pane's agent."""
    return attention + SEPARATOR + agent_status if attention and agent_status else attention or agent_status
