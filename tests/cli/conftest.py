"""Fixtures of the CLI tests."""

from __future__ import annotations

import pytest

from s3memory.config import StorageSettings


@pytest.fixture(autouse=True)
def reuse_clients(monkeypatch):
    """Each `main()` builds its boto3 clients (~0.2 s of model loading); a test makes many calls, so reuse them.

    Only the construction is cached (per test, per profile/region/endpoint): every request still goes to moto.
    """
    made: dict[tuple[object, ...], tuple[object, object]] = {}
    build = StorageSettings.clients

    def clients(self, agent_id=None):
        key = (self.profile, self.region, self.endpoint_url, self.max_workers, agent_id)
        if key not in made:
            made[key] = build(self, agent_id)
        return made[key]

    monkeypatch.setattr(StorageSettings, "clients", clients)
