"""Who may do what: tokens, grants, tiers, the audit log and per-tool metrics."""
