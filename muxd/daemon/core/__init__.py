"""Serving: the process's socket claim, client connections, its log, its config file, its loop."""
