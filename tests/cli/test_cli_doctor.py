"""`s3memory doctor` on moto: every capability probed, the scratch prefix removed, honest verdicts.

moto enforces conditional PUT (create and If-Match) and conditional DeleteObject, but ignores
the per-entry ETag of DeleteObjects and CopySourceIfMatch: the doctor must say so (it is the
point of the command). The same probes run against MiniStack in tests/storage/test_endpoint.py.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from tests.support import BUCKET
from tests.support.cli import run
from tests.support.endpoint import ON_MOTO


def doctor_json(capsys: Any, kms_key: str, monkeypatch: Any, s3: Any) -> dict[str, Any]:
    """`s3memory doctor --json` with a KMS key; checks it left nothing behind."""
    monkeypatch.setenv("S3MEMORY_KMS_KEY_ID", kms_key)
    monkeypatch.delenv("S3MEMORY_LOCAL_KEY")
    code, out, err = run(capsys, "doctor", "--json")
    assert (code, err) == (0, "")
    assert s3.list_objects_v2(Bucket=BUCKET).get("KeyCount") == 0  # the scratch prefix is gone
    report: dict[str, Any] = json.loads(out)
    return report


@pytest.mark.moto_only
def test_doctor_json_on_moto(capsys: Any, env: Any, kms_key: str, monkeypatch: Any, s3: Any) -> None:
    report = doctor_json(capsys, kms_key, monkeypatch, s3)
    assert report["capabilities"] == {
        "put_if_none_match": True,
        "put_if_match": True,
        "delete_if_match": True,
        "delete_objects_if_match": False,
        "copy_if_match": False,
        "versioning": False,
        "keystore_lifecycle": True,
        "kms_context": True,
        "kms_reencrypt": True,
    }
    assert report["safe"] is True
    assert report["weaker"] == [
        "batch deletes are checked one by one first: a file edited meanwhile can be lost",
        "rewrap checks then copies: a concurrent write between the two can be overwritten",
        "purge and history have one version per object only; an overwritten or deleted file is gone",
    ]


@pytest.mark.moto_only
def test_doctor_table_says_what_is_ignored(capsys: Any, versioned: Any) -> None:
    s3 = versioned
    code, out, err = run(capsys, "doctor")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[1:10] == [
        "put_if_none_match        yes  create over an existing key: refused (412)",
        "put_if_match             yes  replace of a changed version refused (412); of the current version done",
        "delete_if_match          yes  delete of a changed version: refused (412)",
        "delete_objects_if_match  NO   batch delete of a changed version: IGNORED (deleted it)",
        "copy_if_match            NO   copy of a changed version: IGNORED (answered success)",
        "versioning               yes  bucket versioning: Enabled",
        "keystore_lifecycle       yes  no lifecycle rule in the keystore's bucket",
        "kms_context              NO   not checked: no KMS key configured (S3MEMORY_KMS_KEY_ID)",
        "kms_reencrypt            NO   not checked: no KMS key configured (S3MEMORY_KMS_KEY_ID)",
    ]
    assert lines[10] == "checksums                yes  a PUT with the client's checksum settings works"
    assert lines[11] == "safe: conditional creates and edits are enforced, so no update is lost and one create wins"
    versions = s3.list_object_versions(Bucket=BUCKET)
    assert versions.get("Versions", []) == []
    assert versions.get("DeleteMarkers", []) == []


def test_doctor_on_a_missing_bucket_is_a_configuration_error(capsys: Any, env: Any, monkeypatch: Any) -> None:
    monkeypatch.setenv("S3MEMORY_BUCKET", "no-such-bucket-here")
    assert run(capsys, "doctor") == (
        2,
        "",
        "s3memory: error: the bucket does not exist (NoSuchBucket); "
        "check S3MEMORY_BUCKET (--bucket) and S3MEMORY_REGION (--region)\n",
    )


@pytest.mark.skipif(ON_MOTO or os.environ.get("S3MEMORY_TEST_STORE") != "ministack", reason="MiniStack run only")
def test_doctor_json_on_ministack(capsys: Any, env: Any, kms_key: str, monkeypatch: Any, s3: Any) -> None:
    """MiniStack enforces every S3 condition; its KMS has no ReEncrypt."""
    report = doctor_json(capsys, kms_key, monkeypatch, s3)
    assert report["capabilities"] == {
        "put_if_none_match": True,
        "put_if_match": True,
        "delete_if_match": True,
        "delete_objects_if_match": True,
        "copy_if_match": True,
        "versioning": False,
        "keystore_lifecycle": True,
        "kms_context": True,
        "kms_reencrypt": False,
    }
    assert report["safe"] is True
    assert report["weaker"] == [
        "purge and history have one version per object only; an overwritten or deleted file is gone",
        "rewrap cannot move data keys inside KMS",
    ]


WEAKER_LIFECYCLE = (
    "weaker: a lifecycle rule may expire or archive the agents' branch keys, after which their files cannot be "
    "decrypted: keep .s3memory/keys/ out of expiration and archive transition rules, or the keys in "
    "S3MEMORY_KEYSTORE_BUCKET"
)
KEYS_AT_RISK = "KEYS AT RISK: a lifecycle rule would delete or archive the agents' branch keys (keystore_lifecycle)"


@pytest.mark.moto_only
def test_doctor_fails_on_a_lifecycle_rule_that_expires_branch_keys(capsys: Any, env: Any, s3: Any) -> None:
    rules = [
        {"ID": "tagged", "Status": "Enabled", "Filter": {"Tag": {"Key": "s3memory-accessed", "Value": "x"}},
         "Expiration": {"Days": 30}},
        {"ID": "elsewhere", "Status": "Enabled", "Filter": {"Prefix": "logs/"}, "Expiration": {"Days": 30}},
    ]  # fmt: skip
    s3.put_bucket_lifecycle_configuration(Bucket=BUCKET, LifecycleConfiguration={"Rules": rules})
    code, out, _ = run(capsys, "doctor")
    assert code == 0
    lines = out.splitlines()
    assert "keystore_lifecycle       yes  no lifecycle rule expires or archives the agents' branch keys" in lines
    assert KEYS_AT_RISK not in lines
    rules.append({"ID": "age", "Status": "Enabled", "Filter": {"Prefix": "agents/"}, "Expiration": {"Days": 90}})
    s3.put_bucket_lifecycle_configuration(Bucket=BUCKET, LifecycleConfiguration={"Rules": rules})
    code, out, err = run(capsys, "doctor")
    assert (code, err) == (1, "")  # the conditions are enforced, but every file would become undecryptable
    lines = out.splitlines()
    assert lines[7] == "keystore_lifecycle       NO   lifecycle rule age expires objects under the agents' keystores"
    assert lines[11:] == [
        "safe: conditional creates and edits are enforced, so no update is lost and one create wins",
        KEYS_AT_RISK,
        "weaker: batch deletes are checked one by one first: a file edited meanwhile can be lost",
        "weaker: rewrap checks then copies: a concurrent write between the two can be overwritten",
        "weaker: purge and history have one version per object only; an overwritten or deleted file is gone",
        WEAKER_LIFECYCLE,
        "weaker: data keys are not bound to the agent by KMS encryption context",
        "weaker: rewrap cannot move data keys inside KMS",
    ]


@pytest.mark.moto_only
def test_doctor_fails_on_a_transition_of_branch_keys_to_an_archive_class(
    capsys: Any, env: Any, kms_key: str, monkeypatch: Any, s3: Any
) -> None:
    """A transition to Glacier Flexible Retrieval or Deep Archive makes keys unreadable until restored;
    one to a class read at once does not."""
    monkeypatch.setenv("S3MEMORY_KMS_KEY_ID", kms_key)
    monkeypatch.delenv("S3MEMORY_LOCAL_KEY")
    rules = [
        {"ID": "cool", "Status": "Enabled", "Filter": {"Prefix": "agents/"},
         "Transitions": [{"Days": 30, "StorageClass": "STANDARD_IA"}, {"Days": 60, "StorageClass": "GLACIER_IR"}]},
        {"ID": "logs", "Status": "Enabled", "Filter": {"Prefix": "logs/"},
         "Transitions": [{"Days": 30, "StorageClass": "DEEP_ARCHIVE"}]},
    ]  # fmt: skip
    s3.put_bucket_lifecycle_configuration(Bucket=BUCKET, LifecycleConfiguration={"Rules": rules})
    code, out, err = run(capsys, "doctor", "--json")
    assert (code, err) == (0, "")
    report = json.loads(out)
    assert (report["capabilities"]["keystore_lifecycle"], report["keys_at_risk"]) == (True, False)
    rules.append(
        {"ID": "cold", "Status": "Enabled", "Filter": {"Prefix": "agents/"},
         "Transitions": [{"Days": 30, "StorageClass": "STANDARD_IA"}, {"Days": 90, "StorageClass": "GLACIER"}]}
    )  # fmt: skip
    s3.put_bucket_lifecycle_configuration(Bucket=BUCKET, LifecycleConfiguration={"Rules": rules})
    code, out, err = run(capsys, "doctor", "--json")
    assert (code, err) == (1, "")
    report = json.loads(out)
    assert (report["safe"], report["keys_at_risk"], report["capabilities"]["keystore_lifecycle"]) == (True, True, False)
    assert report["weaker"][-1] == WEAKER_LIFECYCLE.removeprefix("weaker: ")
    code, out, err = run(capsys, "doctor")
    assert (code, err) == (1, "")
    assert out.splitlines()[7] == (
        "keystore_lifecycle       NO   lifecycle rule cold moves objects under the agents' keystores to GLACIER"
    )
    assert KEYS_AT_RISK in out.splitlines()
