"""The execution history's domain: what an execution is (record.py), how one is followed
from start to end in a pane (tracker.py), how failures are grouped (fingerprint.py), what
the agents' own session logs say about a turn (session_logs/), and what an agent answered in
a turn as its screen shows it (answers/)."""
