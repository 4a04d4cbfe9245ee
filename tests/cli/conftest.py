"""Fixtures of the CLI tests (the clients `main()` uses: `cli_clients` in tests/conftest.py)."""
