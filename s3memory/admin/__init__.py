"""Operator library code: agents, verify, prune, purge, rewrap, export and import. Plain functions
that print nothing and know no exit codes; the CLI prints their reports."""
