"""The execution history's domain: what an execution is (record.py), how one is followed
from start to end in a pane (tracker.py), how failures are grouped (fingerprint.py), and
what the agents' own session logs say about a turn (session_logs/)."""
