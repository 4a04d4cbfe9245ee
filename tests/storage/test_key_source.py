"""A key sealed by another key source than the configured one is a configuration error naming the
variable, not a failed integrity check (issue 34, item 2). Nothing is unwrapped either way."""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import pytest

from s3memory import LocalKeys
from s3memory.errors import IntegrityError, KeyMisconfigured
from s3memory.storage.keys import other_source
from tests.support import LOCAL_KEY, err, ok
from tests.support.cli import run
from tests.support.legacy import data_key

MISCONFIGURED = (
    "Error: The encryption key cannot be used ({}); nothing was changed. An operator must fix the key configuration."
)
OTHER_KEY = bytes(range(1, 33))


def test_a_local_tool_on_a_kms_sealed_agent_names_the_key_source(make_tool: Callable[..., Any]) -> None:
    """Old code: "failed its integrity check", which reads as tampering."""
    ok(make_tool(use_kms=True), command="create", path="/memories/a.md", file_text="a\n")
    assert err(make_tool(), command="view", path="/memories/a.md") == MISCONFIGURED.format("SealedWithKms")


def test_another_local_key_names_s3memory_local_key(make_tool: Callable[..., Any]) -> None:
    ok(make_tool(), command="create", path="/memories/a.md", file_text="a\n")
    assert err(make_tool(keys=LocalKeys(OTHER_KEY)), command="view", path="/memories/a.md") == (
        MISCONFIGURED.format("OtherLocalKey")
    )


def test_cat_and_verify_with_another_local_key_say_which_variable(
    capsys: Any, env: Any, make_tool: Callable[..., Any]
) -> None:
    """Old code: `verify` said "branch key ...: failed its integrity check"."""
    ok(make_tool("ann"), command="create", path="/memories/a.md", file_text="a\n")
    other = base64.b64encode(OTHER_KEY).decode()
    code, _, error = run(capsys, "cat", "--agent", "ann", "--local-key", other, "/memories/a.md")
    assert (code, error) == (
        2,
        "s3memory: error: it was sealed with another local key than S3MEMORY_LOCAL_KEY (OtherLocalKey); "
        "set S3MEMORY_LOCAL_KEY (--local-key) to the local key that sealed it\n",
    )
    code, out, _ = run(capsys, "verify", "--agent", "ann", "--local-key", other)
    assert code == 1
    problems = [line for line in out.splitlines() if line.startswith("failed: ")]
    assert problems[0].endswith(
        ": sealed with another local key than S3MEMORY_LOCAL_KEY (OtherLocalKey): "
        "set S3MEMORY_LOCAL_KEY (--local-key) to the local key that sealed it"
    )
    assert "integrity" not in out


@pytest.mark.parametrize(
    ("sealed", "configured", "code"),
    [
        ("aws-kms", "local-0123456789abcdef", "SealedWithKms"),
        ("local-0123456789abcdef", "aws-kms", "SealedWithLocalKey"),
        ("local-0123456789abcdef", "local-fedcba9876543210", "OtherLocalKey"),
    ],
)
def test_a_provider_s3memory_writes_is_a_configuration_error(sealed: str, configured: str, code: str) -> None:
    answer = other_source(sealed, configured)
    assert isinstance(answer, KeyMisconfigured)
    assert answer.code == code


@pytest.mark.parametrize("sealed", ["local-", "gcp-kms", "x"])
def test_any_other_provider_stays_an_integrity_failure(sealed: str) -> None:
    assert type(other_source(sealed, "local-" + "0" * 16)) is IntegrityError


def test_the_configured_local_key_still_opens(make_tool: Callable[..., Any]) -> None:
    ok(make_tool(), command="create", path="/memories/a.md", file_text="a\n")
    assert ok(make_tool(keys=LocalKeys(LOCAL_KEY)), command="view", path="/memories/a.md").endswith("1\ta")


LOCAL_WRAP = bytes(60)  # the length of every local wrap
KMS_BLOB = bytes(96)  # the length of a moto KMS blob (AWS's are longer)


@pytest.mark.parametrize(
    ("sealed", "configured", "wrapped"),
    [
        ("aws-kms", "local-0123456789abcdef", LOCAL_WRAP),  # a local wrap relabelled as KMS
        ("local-0123456789abcdef", "aws-kms", KMS_BLOB),  # a KMS blob relabelled as local
        ("local-0123456789abcdef", "local-fedcba9876543210", KMS_BLOB),
    ],
)
def test_a_provider_the_wrapped_key_does_not_fit_is_tampering(sealed: str, configured: str, wrapped: bytes) -> None:
    """The provider field is not authenticated: it names the key source only for a key of that source's shape."""
    assert type(other_source(sealed, configured, wrapped)) is IntegrityError


@pytest.mark.parametrize(
    ("sealed", "configured", "wrapped", "code"),
    [
        ("aws-kms", "local-0123456789abcdef", KMS_BLOB, "SealedWithKms"),
        ("local-0123456789abcdef", "aws-kms", LOCAL_WRAP, "SealedWithLocalKey"),
        ("local-0123456789abcdef", "local-fedcba9876543210", LOCAL_WRAP, "OtherLocalKey"),
    ],
)
def test_a_wrapped_key_of_the_named_shape_is_a_configuration_error(
    sealed: str, configured: str, wrapped: bytes, code: str
) -> None:
    answer = other_source(sealed, configured, wrapped)
    assert isinstance(answer, KeyMisconfigured)
    assert answer.code == code


def test_a_local_wrap_relabelled_with_another_local_key_id_is_tampering() -> None:
    """A wrap the configured local key opens was sealed by it: only its provider field was altered."""
    keys = LocalKeys(LOCAL_KEY)
    wrapped = data_key(keys, "a").wrapped
    with pytest.raises(IntegrityError):
        keys.unwrap("a", "local-0123456789abcdef", wrapped)
    with pytest.raises(KeyMisconfigured, match="OtherLocalKey"):  # a wrap of another local key
        LocalKeys(OTHER_KEY).unwrap("a", "local-0123456789abcdef", wrapped)
