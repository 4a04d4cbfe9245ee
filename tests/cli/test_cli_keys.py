"""`s3memory rewrap` against keys that cannot be used: one configuration error, nothing touched.

rewrap moves each agent's branch keys (format 2) under another KMS key; with `--objects` it also
rewraps format-1 objects (each with its own wrapped data key) one by one, as s3memory 0.1 did.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from s3memory.storage.kms import KmsKeys
from tests.support import BUCKET, ok
from tests.support.cli import CliClients, run
from tests.support.legacy import data_key, put_format1

# rewrap needs KMS ReEncrypt, which MiniStack does not implement (InvalidAction): moto only.
pytestmark = pytest.mark.moto_only

KEYS = "agents/ann/.s3memory/keys/"


def stock(layout: str, s3: Any, make_tool: Any, kms: Any, kms_key: str, count: int) -> list[str]:
    """`count` files for each of `ann` and `bob`, by the tool (format 2, a branch key per agent) or
    as s3memory 0.1 left them (format 1); returns the rewrap flags that reach them."""
    keys = KmsKeys(kms_key, kms_client=kms)
    for agent in ("ann", "bob"):
        tool = make_tool(agent, use_kms=True) if layout == "branch keys" else None
        window = data_key(keys, agent) if tool is None else None  # 0.1: one data key per agent and process
        for i in range(count):
            if window is None:
                ok(tool, command="create", path=f"/memories/f{i}.md", file_text=f"{i}\n")
            else:
                put_format1(s3, window, agent, f"f{i}.md", f"{i}\n")
    return [] if layout == "branch keys" else ["--objects"]


@pytest.mark.parametrize("layout", ["branch keys", "format-1 objects"])
def test_a_missing_destination_key_is_one_configuration_error(
    capsys: Any, env: Any, make_tool: Any, s3: Any, kms: Any, kms_key: str, layout: str
) -> None:
    flags = stock(layout, s3, make_tool, kms, kms_key, 5)
    before = {o["Key"]: o["ETag"] for o in s3.list_objects_v2(Bucket=BUCKET)["Contents"]}
    assert len(before) == (14 if layout == "branch keys" else 10)  # with the 2 keystore objects of each agent
    code, out, err = run(capsys, "rewrap", "--yes", "--to-key", "alias/does-not-exist", *flags, "-q")
    assert (code, out) == (2, "")
    assert err == ("s3memory: error: KMS refused the keys (NotFoundException); nothing was rewrapped; check --to-key\n")
    assert {o["Key"]: o["ETag"] for o in s3.list_objects_v2(Bucket=BUCKET)["Contents"]} == before


def test_the_source_key_is_named_when_it_was_given(
    capsys: Any, env: Any, make_tool: Any, kms: Any, kms_key: str, monkeypatch: Any, cli_clients: CliClients
) -> None:
    ok(make_tool("ann", use_kms=True), command="create", path="/memories/a.md", file_text="a\n")
    monkeypatch.setenv("S3MEMORY_KMS_KEY_ID", kms_key)
    code, _, err = run(capsys, "rewrap", "--yes", "--to-key", "alias/does-not-exist", "-q")
    assert code == 2
    assert err == (
        "s3memory: error: KMS refused the keys (NotFoundException); nothing was rewrapped; "
        "check --to-key and the source key (S3MEMORY_KMS_KEY_ID, --kms-key-id)\n"
    )


def use_clients(cli_clients: CliClients, kms: Any, requests: list[tuple[str, str, str]] | None = None) -> None:
    """The CLI uses the test's KMS client (to see what it sends), and records its S3 requests on `requests`."""

    def record(params: Any, model: Any, **_: Any) -> None:
        if requests is not None:
            condition = "IfMatch" if params.get("IfMatch") else "IfNoneMatch" if params.get("IfNoneMatch") else ""
            requests.append((model.name, params.get("Key") or params.get("Prefix", ""), condition))

    cli_clients.kms = kms
    cli_clients.hook("before-parameter-build.s3.*", record)


def test_rewrap_sends_the_source_key_and_resumes(
    capsys: Any, env: Any, s3: Any, kms: Any, kms_key: str, monkeypatch: Any, cli_clients: CliClients
) -> None:
    """With the source key known, ReEncrypt gets `SourceKeyId`; a second run finds every key moved."""
    window = data_key(KmsKeys(kms_key, kms_client=kms), "ann")
    for i in range(3):
        put_format1(s3, window, "ann", f"f{i}.md", f"{i}\n")
    new_key = kms.create_key(Description="new")["KeyMetadata"]["KeyId"]
    sent: list[str | None] = []
    kms.meta.events.register(
        "provide-client-params.kms.ReEncrypt", lambda params, **_: sent.append(params.get("SourceKeyId"))
    )
    monkeypatch.setenv("S3MEMORY_KMS_KEY_ID", kms_key)
    use_clients(cli_clients, kms)
    code, out, _ = run(capsys, "rewrap", "--yes", "--to-key", new_key, "--objects", "-q")
    assert code == 0
    assert re.fullmatch(
        rf"rewrapped 0 branch keys in \d+\.\d\d s \(0 already under {new_key}, 1 KMS call; "
        r"3 format-1 objects rewrapped, 0 already\)\n",
        out,
    )  # one data key for the 3 objects
    assert sent == [kms_key]
    code, out, _ = run(capsys, "rewrap", "--yes", "--to-key", new_key, "--objects", "-q")
    assert code == 0
    assert out.endswith(f" s (0 already under {new_key}, 1 KMS call; 0 format-1 objects rewrapped, 3 already)\n")
    # KMS answers IncorrectKeyException to the old SourceKeyId and rewrap retries onto the key itself;
    # moto does not check SourceKeyId, so there the first request already reports "already there".
    assert sent[:2] == [kms_key, kms_key]
    assert sent[2:] in ([], [new_key])


def test_rewrap_of_branch_keys_sends_the_source_key_and_resumes(
    capsys: Any, env: Any, make_tool: Any, s3: Any, kms: Any, kms_key: str, monkeypatch: Any, cli_clients: CliClients
) -> None:
    """The same for a branch key: one LIST of the keystore, one ReEncrypt, then the claim rewritten
    (conditional on the listed ETag), a new index entry carrying the new claim's tag (create-only),
    the old index entry deleted."""
    tool = make_tool("ann", use_kms=True)
    for i in range(3):
        ok(tool, command="create", path=f"/memories/f{i}.md", file_text=f"{i}\n")
    [claim, old_index] = sorted(o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix=KEYS)["Contents"])
    new_key = kms.create_key(Description="new")["KeyMetadata"]["KeyId"]
    sent: list[str | None] = []
    kms.meta.events.register(
        "provide-client-params.kms.ReEncrypt", lambda params, **_: sent.append(params.get("SourceKeyId"))
    )
    monkeypatch.setenv("S3MEMORY_KMS_KEY_ID", kms_key)
    requests: list[tuple[str, str, str]] = []
    use_clients(cli_clients, kms, requests)
    code, out, _ = run(capsys, "rewrap", "--yes", "--to-key", new_key, "--agent", "ann", "-q")
    assert code == 0
    assert re.fullmatch(
        rf"rewrapped 1 branch key in \d+\.\d\d s \(0 already under {new_key}, 1 KMS call\)\nnote: .*\n", out
    )
    assert sent == [kms_key]
    [claim_after, new_index] = sorted(o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix=KEYS)["Contents"])
    assert claim_after == claim
    assert new_index != old_index
    assert new_index.split(".")[0] == old_index.split(".")[0]  # the same branch key, wrapped anew
    assert requests == [
        ("ListObjectsV2", "agents/ann/", ""),  # is there an agent ann? (a typo creates none)
        ("ListObjectsV2", KEYS, ""),
        ("PutObject", claim, "IfMatch"),
        ("PutObject", new_index, "IfNoneMatch"),
        ("DeleteObject", old_index, ""),
    ]
    assert ok(make_tool("ann", keys=KmsKeys(new_key, kms_client=kms)), command="view", path="/memories/f1.md").endswith(
        "1\t1"
    )

    requests.clear()
    code, out, _ = run(capsys, "rewrap", "--yes", "--to-key", new_key, "--agent", "ann", "-q")
    assert code == 0
    assert re.fullmatch(
        rf"rewrapped 0 branch keys in \d+\.\d\d s \(1 already under {new_key}, 1 KMS call\)\nnote: .*\n", out
    )
    assert requests == [("ListObjectsV2", "agents/ann/", ""), ("ListObjectsV2", KEYS, "")]  # nothing written
    assert sent[:2] == [kms_key, kms_key]
    assert sent[2:] in ([], [new_key])
