"""The six memory commands' semantics (`Memory`), directory changes with intent records,
single-file moves, the write policy, and the wording of failures. Imports `storage` and `core`."""
