"""Attention: the daemon's event bus and what is drawn from it — which agents need a person,
window alerts, hooks on events, notifications."""
