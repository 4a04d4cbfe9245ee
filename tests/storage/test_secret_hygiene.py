"""No secret leaves through logs, configuration errors or exception chains."""

from __future__ import annotations

import base64
import logging
import traceback
from collections.abc import Callable
from typing import Any

import pytest
from anthropic.lib.tools import ToolError
from botocore.exceptions import ClientError
from pydantic import ValidationError

from s3memory import ConfigurationError, S3MemoryTool, Settings
from s3memory.storage.kms import KmsKeys
from tests.support import BUCKET, LOCAL_KEY, ok


def test_plaintext_data_keys_never_reach_a_debug_log(
    make_tool: Callable[..., Any], kms: Any, kms_key: str, caplog: pytest.LogCaptureFixture
) -> None:
    seen: list[bytes] = []
    kms.meta.events.register("after-call.kms.*", lambda parsed, **_: seen.append(parsed.get("Plaintext", b"")))
    with caplog.at_level(logging.DEBUG):  # the root logger, as an application might set it
        writer = make_tool(keys=KmsKeys(kms_key, kms_client=kms))
        ok(writer, command="create", path="/memories/a.md", file_text="secret plan")
        reader = make_tool(keys=KmsKeys(kms_key, kms_client=kms))  # a cold reader: Decrypt
        ok(reader, command="view", path="/memories/a.md")
    keys = [k for k in seen if k]
    assert len(keys) == 2  # GenerateDataKey and Decrypt both returned the key
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "Response body" in logged  # botocore did log at DEBUG...
    for key in keys:  # ...but never the key, in any form
        for form in (base64.b64encode(key).decode(), key.hex(), repr(key), str(key)):
            assert form not in logged
    assert logging.getLogger("botocore.parsers").level == logging.NOTSET  # levels untouched


def secret_free(text: str, secret: str) -> None:
    for n in range(8, len(secret) + 1, 4):  # no part of it either
        for i in range(0, len(secret) - n + 1, 4):
            assert secret[i : i + n] not in text


@pytest.mark.parametrize(
    "env",
    [
        {"S3MEMORY_LOCAL_KEY": base64.b64encode(LOCAL_KEY).decode(), "S3MEMORY_KMS_KEY_ID": "alias/x"},
        {"S3MEMORY_LOCAL_KEY": base64.b64encode(b"only-twenty-four-bytes!!").decode()},
        {"S3MEMORY_LOCAL_KEY": "not base64 at all but secret-ish material"},
    ],
    ids=["both-key-sources", "wrong-length", "not-base64"],
)
def test_configuration_errors_never_echo_the_local_key(monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> None:
    monkeypatch.setenv("S3MEMORY_BUCKET", BUCKET)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ConfigurationError) as raised:  # naming the variable (issue 34 item 4)
        S3MemoryTool.from_env("agent-42")
    shown = "\n".join([str(raised.value), repr(raised.value), *traceback.format_exception(raised.value)])
    secret_free(shown, env["S3MEMORY_LOCAL_KEY"])
    with pytest.raises(ValidationError) as caught:
        Settings()
    secret_free(str(caught.value) + repr(caught.value), env["S3MEMORY_LOCAL_KEY"])


def test_errors_crossing_the_api_carry_no_chained_exception(make_tool: Callable[..., Any], s3: Any) -> None:
    tool = make_tool()
    ok(tool, command="create", path="/memories/a.md", file_text="a")

    def fail(**_: Any) -> None:
        raise ClientError(
            {"Error": {"Code": "SlowDown", "Message": f"slow down on arn:aws:s3:::{BUCKET}/agents/agent-42/a.md"},
             "ResponseMetadata": {"HTTPStatusCode": 503}},
            "GetObject",
        )  # fmt: skip

    s3.meta.events.register("before-call.s3.GetObject", fail)
    with pytest.raises(ToolError) as through_tool:
        tool.call({"command": "view", "path": "/memories/a.md"})
    assert through_tool.value.__context__ is None
    assert through_tool.value.__cause__ is None
    from s3memory.errors import CommandError

    with pytest.raises(CommandError) as through_memory:
        tool.memory.view("/memories/a.md")
    chain = through_memory.value
    assert chain.__context__ is None
    assert chain.__cause__ is None
    # Only this test's frame and the public entry point: no inner frame (and its locals) rides along.
    assert [frame.name for frame in traceback.extract_tb(chain.__traceback__)] == [
        "test_errors_crossing_the_api_carry_no_chained_exception",
        "run",
    ]
    assert BUCKET not in "".join(traceback.format_exception(chain))


def test_a_header_that_does_not_decode_is_an_integrity_failure_without_its_bytes(
    make_tool: Callable[..., Any], s3: Any
) -> None:
    """Decrypted bytes that are not UTF-8 never ride along in an exception chain."""
    from s3memory.core.paths import MemoryPath
    from s3memory.errors import IntegrityError

    tool = make_tool()
    vault = tool.memory.vault
    sealed = vault.seal(MemoryPath(("bin.md",)), b"\xff\xfe private bytes")
    s3.put_object(Bucket=BUCKET, Key="agents/agent-42/bin.md", Body=sealed.body, Metadata=sealed.metadata)
    with pytest.raises(IntegrityError) as caught:
        vault.read(MemoryPath(("bin.md",)))
    assert caught.value.__context__ is None
