"""Operator library code: agents, verify, export, import, history, show, redact, restore, prune,
purge, shred, rotate, rewrap, reseal, migrate and doctor. Plain functions that print nothing and
know no exit codes; the CLI prints their reports."""
