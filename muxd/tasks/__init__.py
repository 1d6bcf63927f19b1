"""The task queue (seed 001): tasks worker agents pull, claim with a lease, and complete
against a verification contract; the knowledge their learnings leave behind."""
