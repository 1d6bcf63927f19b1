"""The actions daemons of a shared PostgreSQL database ask of each other's panes
(store/host_actions.py), on a private cluster: each pending action is claimed once however many
claimants race, and only by its own host; a start refuses what its host's last run claimed and
never answered; a prompt not claimed yet can be taken back, a claimed one cannot; an answer
carries the owner's typed error or its JSON; the prompts a host sent are unended until the owner
refuses them or the history says they ended."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable

import pytest

pytest.importorskip("psycopg", reason="psycopg is not installed (pip install -e '.[test]')")
from muxd.executions.record import Execution  # noqa: E402
from muxd.store import host_actions  # noqa: E402
from muxd.store.execution_rows import UPSERT, to_row  # noqa: E402
from muxd.store.pg_connection import PgConnection  # noqa: E402

ACTIONS = 200
CLAIMANTS = 4


def test_each_action_is_claimed_once_and_only_by_its_host(connect_pg: Callable[..., PgConnection]) -> None:
    alpha = connect_pg(host="alpha")
    seqs = [host_actions.insert_action(alpha, "send", "beta", "system", {"message": f"m{n}"}, pane_id="%1",
                                       execution_id=f"exec_1_{n:08x}") for n in range(ACTIONS)]
    host_actions.insert_action(alpha, "send", "gamma", "system", {"message": "not beta's"}, pane_id="%1")
    assert host_actions.claim_pending(alpha) == []  # alpha has none of its own
    claimants = [connect_pg(host="beta") for _ in range(CLAIMANTS)]
    claimed: list[int] = []
    lock = threading.Lock()

    def claim(c: PgConnection) -> None:
        while True:
            taken = host_actions.claim_pending(c)
            with lock:
                claimed.extend(a.seq for a in taken)
                if len(claimed) >= ACTIONS:
                    return

    threads = [threading.Thread(target=claim, args=(c,)) for c in claimants]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(claimed) == seqs and not [s for s, n in Counter(claimed).items() if n > 1]
    first = host_actions.load_action(alpha, seqs[0])
    assert first is not None and first.state == "claimed" and first.from_host == "alpha"
    assert first.request == {"message": "m0"} and first.execution_id == "exec_1_00000000"


def test_answers_withdrawals_and_what_a_start_refuses(connect_pg: Callable[..., PgConnection]) -> None:
    alpha, beta = connect_pg(host="alpha"), connect_pg(host="beta")
    done, refused, left, kept = (host_actions.insert_action(alpha, "send", "beta", "token:ci", {"message": str(n)},
                                                            pane_id="%1", execution_id=f"exec_1_{n:08x}")
                                 for n in range(4))
    [a, b, c, d] = host_actions.claim_pending(beta)
    assert [a.seq, b.seq, c.seq, d.seq] == [done, refused, left, kept]
    host_actions.answer(beta, done, "done", answer={"id": "exec_1_00000000", "status": "running"})
    host_actions.answer(beta, refused, "refused", error=("not_found", "can't find pane: %1", {"target": "%1"}))
    assert host_actions.withdraw(alpha, kept) is False  # claimed already: only its owner ends it now
    late = host_actions.insert_action(alpha, "send", "beta", "token:ci", {"message": "late"}, pane_id="%1",
                                      execution_id="exec_2_00000000")
    assert host_actions.withdraw(alpha, late) is True
    assert host_actions.claim_pending(beta) == []  # a withdrawn action is nobody's to apply
    # beta starts again: what its last run claimed and never answered is refused, not applied twice.
    assert host_actions.refuse_unfinished(beta, "stopped") == 2
    states = {seq: host_actions.load_action(alpha, seq) for seq in (done, refused, left, kept, late)}
    assert {seq: a.state for seq, a in states.items() if a is not None} == {
        done: "done", refused: "refused", left: "refused", kept: "refused", late: "withdrawn"}
    assert states[done].answer == {"id": "exec_1_00000000", "status": "running"}  # type: ignore[union-attr]
    assert (states[refused].error_code, states[refused].error_detail) == ("not_found", {"target": "%1"})  # type: ignore[union-attr]
    assert states[left].error_code == "interrupted"  # type: ignore[union-attr]
    assert host_actions.sent_as(alpha, "exec_2_00000000").seq == late  # type: ignore[union-attr]
    assert host_actions.channel_of("beta") != host_actions.channel_of("Beta")
    # Forgotten once old, by their owner only.
    assert host_actions.forget_answered(alpha, time.time() + 1) == 0
    assert host_actions.forget_answered(beta, time.time() - 60) == 0
    assert host_actions.forget_answered(beta, time.time() + 1) == 5


def test_the_prompts_a_host_sent_are_running_until_a_row_or_the_owner_says_otherwise(
        connect_pg: Callable[..., PgConnection]) -> None:
    alpha, beta, gamma = connect_pg(host="alpha"), connect_pg(host="beta"), connect_pg(host="gamma")
    sent = [host_actions.insert_action(alpha, "send", "beta", "system", {"message": str(n)}, pane_id="%1",
                                       execution_id=f"exec_1_{n:08x}") for n in range(5)]
    host_actions.insert_action(gamma, "send", "beta", "system", {"message": "gamma's"}, pane_id="%1",
                               execution_id="exec_9_00000000")
    host_actions.insert_action(alpha, "cancel", "beta", "system", {}, execution_id="exec_1_00000000")
    claimed = {a.seq: a for a in host_actions.claim_pending(beta)}
    for n, status in ((0, "running"), (1, "success")):  # the owner's rows in the history
        beta.execute(UPSERT, to_row(Execution(id=f"exec_1_{n:08x}", pane_id="%1", pane_key="run/%1", agent_name="a",
                                              status=status)))  # type: ignore[arg-type]
        host_actions.answer(beta, sent[n], "done", answer={"id": f"exec_1_{n:08x}"})
    host_actions.answer(beta, sent[2], "refused", error=("not_found", "no pane", {}))
    assert claimed and host_actions.withdraw(alpha, sent[3]) is False  # claimed: the owner's now
    assert host_actions.sent_unended(alpha, 10) == [("beta", "exec_1_00000004"), ("beta", "exec_1_00000003"),
                                                    ("beta", "exec_1_00000000")]
    assert host_actions.sent_unended(alpha, 1) == [("beta", "exec_1_00000004")]
    assert host_actions.sent_unended(beta, 10) == []  # beta sent nothing
