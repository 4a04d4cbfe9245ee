"""Settings from S3MEMORY_* and S3MemoryTool.from_env, including per-agent credentials."""

from __future__ import annotations

import base64

import pytest
from pydantic import ValidationError

from s3memory import S3MemoryTool, Settings
from s3memory.storage.keys import LocalKeys
from s3memory.storage.kms import KmsKeys
from s3memory.storage.sts import clear_agent_session_cache
from tests.support import BUCKET, LOCAL_KEY, assert_one_branch_key, listed_keys, ok, without_keystore

# Settings wiring, checked on moto: clients are built from S3MEMORY_* alone (no test endpoint).
pytestmark = pytest.mark.moto_only


def test_from_env_with_a_local_key(s3, monkeypatch):
    monkeypatch.setenv("S3MEMORY_BUCKET", BUCKET)
    monkeypatch.setenv("S3MEMORY_PREFIX", "tenants/")
    monkeypatch.setenv("S3MEMORY_LOCAL_KEY", base64.b64encode(LOCAL_KEY).decode())
    monkeypatch.setenv("S3MEMORY_MAX_FILE_BYTES", "10")
    with S3MemoryTool.from_env("agent-7") as tool:
        assert isinstance(tool.memory.vault.keys, LocalKeys)
        assert ok(tool, command="create", path="/memories/a.txt", file_text="0123456789") == (
            "File created successfully at: /memories/a.txt"
        )
        assert tool.memory.limits.max_file_bytes == 10
    keys = listed_keys(s3)
    assert without_keystore(keys) == ["tenants/agent-7/a.txt"]
    assert_one_branch_key(keys, "tenants/agent-7/")  # the keystore: in the memory bucket by default


def test_keystore_bucket_and_rotation_from_the_environment(s3, keystore_bucket, monkeypatch):
    monkeypatch.setenv("S3MEMORY_BUCKET", BUCKET)
    monkeypatch.setenv("S3MEMORY_PREFIX", "tenants/")
    monkeypatch.setenv("S3MEMORY_LOCAL_KEY", base64.b64encode(LOCAL_KEY).decode())
    assert (Settings().keystore_bucket, Settings().key_rotation_days) == (None, 30.0)
    monkeypatch.setenv("S3MEMORY_KEYSTORE_BUCKET", keystore_bucket)
    monkeypatch.setenv("S3MEMORY_KEY_ROTATION_DAYS", "7.5")
    with S3MemoryTool.from_env("agent-7") as tool:
        assert tool.memory.vault.keystore.store.bucket == keystore_bucket
        assert tool.memory.vault.keystore.rotation_seconds == 7.5 * 86400
        ok(tool, command="create", path="/memories/a.txt", file_text="a")
    assert listed_keys(s3) == ["tenants/agent-7/a.txt"]
    assert_one_branch_key(listed_keys(s3, keystore_bucket), "tenants/agent-7/")
    monkeypatch.setenv("S3MEMORY_KEY_ROTATION_DAYS", "0")
    with pytest.raises(ValidationError, match="key_rotation_days"):
        Settings()
    monkeypatch.setenv("S3MEMORY_KEY_ROTATION_DAYS", "7.5")
    monkeypatch.setenv("S3MEMORY_KEYSTORE_BUCKET", "k")
    with pytest.raises(ValidationError, match="keystore_bucket"):
        Settings()


def test_from_env_with_kms_and_an_override(s3, kms, kms_key, monkeypatch):
    monkeypatch.setenv("S3MEMORY_BUCKET", BUCKET)
    monkeypatch.setenv("S3MEMORY_KMS_KEY_ID", kms_key)
    with S3MemoryTool.from_env("agent-8", prefix="other/") as tool:
        assert isinstance(tool.memory.vault.keys, KmsKeys)
        assert tool.memory.vault.root == "other/agent-8/"
        ok(tool, command="create", path="/memories/x.md", file_text="hi\n")
        assert ok(tool, command="view", path="/memories/x.md") == (
            "Here's the content of /memories/x.md with line numbers:\n     1\thi"
        )


def test_exactly_one_key_source_is_required(monkeypatch):
    monkeypatch.setenv("S3MEMORY_BUCKET", BUCKET)
    with pytest.raises(ValidationError, match="set exactly one of S3MEMORY_KMS_KEY_ID or S3MEMORY_LOCAL_KEY"):
        Settings()
    monkeypatch.setenv("S3MEMORY_KMS_KEY_ID", "alias/x")
    monkeypatch.setenv("S3MEMORY_LOCAL_KEY", base64.b64encode(LOCAL_KEY).decode())
    with pytest.raises(ValidationError, match="set exactly one"):
        Settings()


def test_a_bad_local_key_is_refused_without_echoing_it(monkeypatch):
    monkeypatch.setenv("S3MEMORY_BUCKET", BUCKET)
    monkeypatch.setenv("S3MEMORY_LOCAL_KEY", base64.b64encode(b"short-secret-key").decode())
    with pytest.raises(ValidationError) as caught:
        Settings()
    assert "S3MEMORY_LOCAL_KEY must decode to 32 bytes" in str(caught.value)
    assert base64.b64encode(b"short-secret-key").decode() not in str(caught.value)


def test_a_bad_prefix_is_refused(monkeypatch):
    monkeypatch.setenv("S3MEMORY_BUCKET", BUCKET)
    monkeypatch.setenv("S3MEMORY_KMS_KEY_ID", "alias/x")
    monkeypatch.setenv("S3MEMORY_PREFIX", "agents")
    with pytest.raises(ValidationError, match='prefix must be "" or end with "/"'):
        Settings()


def test_agent_role_arn_gives_the_tool_per_agent_credentials(s3, monkeypatch):
    """With S3MEMORY_AGENT_ROLE_ARN, from_env assumes the role tagged with the agent id."""
    clear_agent_session_cache()
    seen: list[dict[str, object]] = []
    import botocore.session

    original = botocore.session.Session.create_client

    def create_client(self, service_name, *args, **kwargs):
        client = original(self, service_name, *args, **kwargs)
        if service_name == "sts":
            client.meta.events.register(
                "provide-client-params.sts.AssumeRole", lambda params, **_: seen.append(dict(params))
            )
        return client

    monkeypatch.setattr(botocore.session.Session, "create_client", create_client)
    monkeypatch.setenv("S3MEMORY_BUCKET", BUCKET)
    monkeypatch.setenv("S3MEMORY_LOCAL_KEY", base64.b64encode(LOCAL_KEY).decode())
    monkeypatch.setenv("S3MEMORY_AGENT_ROLE_ARN", "arn:aws:iam::123456789012:role/s3memory-agent")
    with S3MemoryTool.from_env("agent-9") as tool:
        credentials = tool.memory.vault.store.s3._request_signer._credentials
        assert credentials.get_frozen_credentials().access_key != "testing"
        ok(tool, command="create", path="/memories/t.md", file_text="tagged\n")
    assert len(seen) == 1
    assert seen[0]["RoleArn"] == "arn:aws:iam::123456789012:role/s3memory-agent"
    assert seen[0]["Tags"] == [{"Key": "s3memory-agent", "Value": "agent-9"}]
    clear_agent_session_cache()


def test_checksum_settings_reach_botocore(monkeypatch):
    monkeypatch.setenv("S3MEMORY_BUCKET", BUCKET)
    monkeypatch.setenv("S3MEMORY_LOCAL_KEY", base64.b64encode(LOCAL_KEY).decode())
    assert Settings().botocore_config().request_checksum_calculation is None  # botocore's own default applies
    monkeypatch.setenv("S3MEMORY_REQUEST_CHECKSUM_CALCULATION", "when_required")
    monkeypatch.setenv("S3MEMORY_RESPONSE_CHECKSUM_VALIDATION", "when_required")
    config = Settings().botocore_config()
    assert (config.request_checksum_calculation, config.response_checksum_validation) == ("when_required",) * 2
    monkeypatch.setenv("S3MEMORY_REQUEST_CHECKSUM_CALCULATION", "sometimes")
    with pytest.raises(ValidationError, match="request_checksum_calculation"):
        Settings()


def test_key_cache_seconds_bounds_how_long_keys_and_keystore_listings_are_reused(monkeypatch):
    import base64

    from s3memory.config import Settings

    monkeypatch.setenv("S3MEMORY_BUCKET", "some-bucket")
    monkeypatch.setenv("S3MEMORY_LOCAL_KEY", base64.b64encode(bytes(32)).decode())
    monkeypatch.setenv("S3MEMORY_KEY_CACHE_SECONDS", "5")
    caches = Settings().keys().caches
    assert (caches.unwraps.ttl, caches.rings.ttl) == (5.0, 5.0)
    clock = [100.0]
    caches.rings._clock = caches.unwraps._clock = lambda: clock[0]
    from s3memory.core.keyring import Ring

    caches.rings.put(("b", "f/"), Ring())
    caches.unwraps.put(("a", "p", b"w"), bytes(32))
    clock[0] = 104.9
    assert caches.rings.get(("b", "f/")) == Ring()
    assert caches.unwraps.get(("a", "p", b"w")) == bytes(32)
    clock[0] = 105.0
    assert caches.rings.get(("b", "f/")) is None
    assert caches.unwraps.get(("a", "p", b"w")) is None


def test_actor_from_the_environment_is_recorded_and_validated(s3, monkeypatch):
    import base64

    import pytest
    from pydantic import ValidationError

    from s3memory import S3MemoryTool
    from s3memory.config import Settings
    from s3memory.core.envelope import Header
    from tests.support import BUCKET, ok

    monkeypatch.setenv("S3MEMORY_BUCKET", BUCKET)
    monkeypatch.setenv("S3MEMORY_LOCAL_KEY", base64.b64encode(bytes(32)).decode())
    monkeypatch.setenv("S3MEMORY_ACTOR", "session-7")
    with S3MemoryTool.from_env("ann", s3_client=s3) as tool:
        ok(tool, command="create", path="/memories/a.md", file_text="x")
        vault = tool.memory.vault
        header = Header.from_metadata(s3.head_object(Bucket=BUCKET, Key="ann/a.md")["Metadata"])
        record = vault.attribution_of(vault.parse("/memories/a.md"), header)
    assert (record.actor, record.command, record.source) == ("session-7", "create", "")
    monkeypatch.setenv("S3MEMORY_ACTOR", "x" * 129)
    with pytest.raises(ValidationError, match=r"actor\s+String should have at most 128 characters"):
        Settings()


def test_held_files_from_the_environment_and_zero_holds_none(s3, monkeypatch, counter):
    monkeypatch.setenv("S3MEMORY_BUCKET", BUCKET)
    monkeypatch.setenv("S3MEMORY_LOCAL_KEY", base64.b64encode(LOCAL_KEY).decode())
    assert Settings().limits().held_files == 256
    monkeypatch.setenv("S3MEMORY_HELD_FILES", "-1")
    with pytest.raises(ValidationError):
        Settings()
    monkeypatch.setenv("S3MEMORY_HELD_FILES", "0")
    with S3MemoryTool.from_env("agent-7", s3_client=s3) as tool:
        ok(tool, command="create", path="/memories/a.md", file_text="one\n")
        counter.reset()
        ok(tool, command="insert", path="/memories/a.md", insert_line=0, insert_text="zero")
        assert counter.by_op() == {"s3:GetObject": 1, "s3:PutObject": 1}  # nothing held: read, then write
        assert len(tool.memory.recent) == 0
