"""`s3memory rewrap` against keys that cannot be used: one configuration error, nothing touched."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support import BUCKET, ok
from tests.support.cli import run

# rewrap needs KMS ReEncrypt, which MiniStack does not implement (InvalidAction): moto only.
pytestmark = pytest.mark.moto_only


def test_a_missing_destination_key_is_one_configuration_error(capsys: Any, env: Any, make_tool: Any, s3: Any) -> None:
    tool = make_tool("ann", use_kms=True)
    for i in range(5):
        ok(tool, command="create", path=f"/memories/f{i}.md", file_text=f"{i}\n")
    before = {o["Key"]: o["ETag"] for o in s3.list_objects_v2(Bucket=BUCKET)["Contents"]}
    code, out, err = run(capsys, "rewrap", "--to-key", "alias/does-not-exist", "-q")
    assert (code, out) == (2, "")
    assert err == ("s3memory: error: KMS refused the keys (NotFoundException); nothing was rewrapped; check --to-key\n")
    assert {o["Key"]: o["ETag"] for o in s3.list_objects_v2(Bucket=BUCKET)["Contents"]} == before


def test_the_source_key_is_named_when_it_was_given(
    capsys: Any, env: Any, make_tool: Any, kms: Any, kms_key: str, monkeypatch: Any
) -> None:
    ok(make_tool("ann", use_kms=True), command="create", path="/memories/a.md", file_text="a\n")
    monkeypatch.setenv("S3MEMORY_KMS_KEY_ID", kms_key)
    code, _, err = run(capsys, "rewrap", "--to-key", "alias/does-not-exist", "-q")
    assert code == 2
    assert err == (
        "s3memory: error: KMS refused the keys (NotFoundException); nothing was rewrapped; "
        "check --to-key and the source key (S3MEMORY_KMS_KEY_ID, --kms-key-id)\n"
    )


def test_rewrap_sends_the_source_key_and_resumes(
    capsys: Any, env: Any, make_tool: Any, kms: Any, kms_key: str, monkeypatch: Any
) -> None:
    """With the source key known, ReEncrypt gets `SourceKeyId`; a second run finds every key moved."""
    tool = make_tool("ann", use_kms=True)
    for i in range(3):
        ok(tool, command="create", path=f"/memories/f{i}.md", file_text=f"{i}\n")
    new_key = kms.create_key(Description="new")["KeyMetadata"]["KeyId"]
    sent: list[str | None] = []
    kms.meta.events.register(
        "provide-client-params.kms.ReEncrypt", lambda params, **_: sent.append(params.get("SourceKeyId"))
    )
    monkeypatch.setenv("S3MEMORY_KMS_KEY_ID", kms_key)
    from s3memory.config import StorageSettings

    build = StorageSettings.clients
    monkeypatch.setattr(StorageSettings, "clients", lambda self, agent_id=None: (build(self, agent_id)[0], kms))
    code, out, _ = run(capsys, "rewrap", "--to-key", new_key, "-q")
    assert code == 0
    assert out.startswith("rewrapped 3 objects in ")
    assert out.endswith(f" s (0 already under {new_key}, 1 KMS call)\n")
    assert sent == [kms_key]
    code, out, _ = run(capsys, "rewrap", "--to-key", new_key, "-q")
    assert code == 0
    assert out.endswith(f" s (3 already under {new_key}, 1 KMS call)\n")
    # KMS answers IncorrectKeyException to the old SourceKeyId and rewrap retries onto the key itself;
    # moto does not check SourceKeyId, so there the first request already reports "already there".
    assert sent[:2] == [kms_key, kms_key]
    assert sent[2:] in ([], [new_key])
