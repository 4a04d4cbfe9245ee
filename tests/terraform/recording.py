"""Record the AWS requests the `s3memory` CLI sends (in process, on moto) and map them to IAM.

`recording()` patches botocore so that every client created while it is active registers
`before-parameter-build` / `before-call` hooks: each operation is recorded with its API
parameters. `iam_requests()` turns the recorded S3 calls into IAM authorization requests
(action, resource ARN, condition context) through an explicit table, the way S3 authorizes
them (a `VersionId` makes GetObject/HeadObject `s3:GetObjectVersion`, a DeleteObjects entry
with one `s3:DeleteObjectVersion`, and so on). An operation missing from the table fails the
test: decide its IAM action and add it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import botocore.session
import pytest


@dataclass(frozen=True)
class Call:
    service: str
    operation: str
    params: dict[str, Any]


class Recorder:
    """Every botocore operation the recorded clients send, with its API parameters."""

    def __init__(self) -> None:
        self.calls: list[Call] = []
        self._lock = threading.Lock()
        self._params = threading.local()

    def attach(self, client: Any) -> None:
        client.meta.events.register("before-parameter-build.*.*", self._keep_params)
        client.meta.events.register("before-call.*.*", self._record)

    def _keep_params(self, params: dict[str, Any], **_: Any) -> None:
        self._params.value = dict(params)

    def _record(self, model: Any, **_: Any) -> None:
        params = getattr(self._params, "value", {})
        with self._lock:
            self.calls.append(Call(model.service_model.service_name, model.name, params))

    def take(self) -> list[Call]:
        """The calls recorded since the last take."""
        with self._lock:
            calls, self.calls = self.calls, []
        return calls


@contextmanager
def recording(monkeypatch: pytest.MonkeyPatch, on_client: Callable[[Any], None] | None = None) -> Iterator[Recorder]:
    """Record every request of every botocore client created inside the block (and hand each
    new client to `on_client`, e.g. to register a fault)."""
    recorder = Recorder()
    create_client = botocore.session.Session.create_client

    def recording_create_client(self: Any, *args: Any, **kwargs: Any) -> Any:
        client = create_client(self, *args, **kwargs)
        recorder.attach(client)
        if on_client is not None:
            on_client(client)
        return client

    with monkeypatch.context() as patch:
        patch.setattr(botocore.session.Session, "create_client", recording_create_client)
        yield recorder


def _versioned(call: Call, plain: str, versioned: str) -> str:
    return versioned if call.params.get("VersionId") else plain


# (IAM action, object key or None for the bucket itself) of each request one call makes.
def s3_actions(call: Call) -> list[tuple[str, str | None]]:
    op, params = call.operation, call.params
    if op in ("GetObject", "HeadObject"):
        return [(_versioned(call, "s3:GetObject", "s3:GetObjectVersion"), params["Key"])]
    if op == "PutObject":
        tagged = [("s3:PutObjectTagging", params["Key"])] if params.get("Tagging") else []
        return [("s3:PutObject", params["Key"]), *tagged]
    if op == "PutObjectTagging":
        return [(_versioned(call, "s3:PutObjectTagging", "s3:PutObjectVersionTagging"), params["Key"])]
    if op == "GetObjectTagging":
        return [(_versioned(call, "s3:GetObjectTagging", "s3:GetObjectVersionTagging"), params["Key"])]
    if op == "DeleteObject":
        return [(_versioned(call, "s3:DeleteObject", "s3:DeleteObjectVersion"), params["Key"])]
    if op == "DeleteObjects":  # authorized per entry
        return [
            ("s3:DeleteObjectVersion" if entry.get("VersionId") else "s3:DeleteObject", entry["Key"])
            for entry in params["Delete"]["Objects"]
        ]
    if op == "ListObjectsV2":
        return [("s3:ListBucket", None)]
    if op == "ListObjectVersions":
        return [("s3:ListBucketVersions", None)]
    if op == "GetBucketVersioning":
        return [("s3:GetBucketVersioning", None)]
    if op == "GetObjectLockConfiguration":  # read once by the commands that delete versions (Object Lock)
        return [("s3:GetBucketObjectLockConfiguration", None)]
    pytest.fail(f"s3:{op} has no IAM mapping in tests/terraform/recording.py: add it", pytrace=False)


KMS_ACTIONS = {
    "GenerateDataKey": "kms:GenerateDataKey",
    "Decrypt": "kms:Decrypt",
    "DescribeKey": "kms:DescribeKey",
}


def kms_action(call: Call) -> str:
    action = KMS_ACTIONS.get(call.operation)
    if action is None:
        pytest.fail(f"kms:{call.operation} has no IAM mapping in tests/terraform/recording.py: add it", pytrace=False)
    return action


IamRequest = tuple[str, str, tuple[tuple[str, str], ...]]


def iam_requests(calls: list[Call]) -> list[IamRequest]:
    """(IAM action, resource ARN, condition context) of every S3 request, deduplicated and sorted."""
    requests: set[IamRequest] = set()
    for call in calls:
        if call.service != "s3":
            continue
        bucket_arn = f"arn:aws:s3:::{call.params['Bucket']}"
        for action, key in s3_actions(call):
            if key is None:
                prefix = call.params.get("Prefix")
                context = (("s3:prefix", prefix),) if prefix is not None and action != "s3:GetBucketVersioning" else ()
                requests.add((action, bucket_arn, context))
            else:
                # The If-None-Match header reaches IAM as s3:if-none-match (a key of s3:PutObject only).
                conditional = action == "s3:PutObject" and "IfNoneMatch" in call.params
                context = (("s3:if-none-match", call.params["IfNoneMatch"]),) if conditional else ()
                requests.add((action, f"{bucket_arn}/{key}", context))
    return sorted(requests)


def actions_used(calls: list[Call]) -> set[str]:
    used = {action for action, _, _ in iam_requests(calls)}
    return used | {kms_action(call) for call in calls if call.service == "kms"}


def granted_actions(document: Any, resource: str | None = None) -> set[str]:
    """What the Allow statements of a policy name (on `resource` only, if given)."""
    granted: set[str] = set()
    for statement in document["Statement"]:
        assert "NotAction" not in statement, statement["Sid"]
        if statement["Effect"] != "Allow" or (resource is not None and statement["Resource"] != resource):
            continue
        actions = statement["Action"]
        granted.update([actions] if isinstance(actions, str) else actions)
    return granted
