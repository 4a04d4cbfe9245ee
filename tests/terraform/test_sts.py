"""s3memory.assume_agent_session (s3memory.storage.sts) on moto: the session tag, the cache, refresh, validation."""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from moto import mock_aws

from s3memory.storage import sts as agent_sts
from s3memory.storage.sts import assume_agent_session, clear_agent_session_cache

ROLE = "arn:aws:iam::123456789012:role/s3memory-agent-access"
OTHER_ROLE = "arn:aws:iam::123456789012:role/other-agent-access"
AGENT_ID_ERROR = (
    "agent_id must be 1-128 characters of letters, digits, '.', '_' or '-', starting with a letter or digit"
)


class Recorder:
    """Records AssumeRole requests as sent (serialized body) and their parsed answers."""

    def __init__(self, client: Any) -> None:
        self.requests: list[dict[str, Any]] = []
        self.responses: list[dict[str, Any]] = []
        client.meta.events.register("before-call.sts.AssumeRole", self._before)
        client.meta.events.register("after-call.sts.AssumeRole", self._after)

    def _before(self, params: dict[str, Any], **_: Any) -> None:
        self.requests.append(dict(params["body"]))

    def _after(self, parsed: dict[str, Any], **_: Any) -> None:
        self.responses.append(parsed)


class Clock:
    def __init__(self) -> None:
        self.now = datetime.datetime.now(datetime.timezone.utc)

    def __call__(self) -> datetime.datetime:
        return self.now


@pytest.fixture(autouse=True)
def _fresh_cache() -> Iterator[None]:
    clear_agent_session_cache()
    yield
    clear_agent_session_cache()


@pytest.fixture
def sts() -> Iterator[Any]:
    with mock_aws():
        yield boto3.client("sts", region_name="us-east-1")


@pytest.fixture
def calls(sts: Any) -> Recorder:
    return Recorder(sts)


@pytest.fixture
def offline_sts() -> tuple[Any, Recorder]:
    """An STS client that must not be called (no moto: validation happens before any call)."""
    client = boto3.client("sts", region_name="us-east-1")
    recorder = Recorder(client)

    def refuse(**_: Any) -> None:
        raise AssertionError("AssumeRole was called")

    client.meta.events.register("before-call.sts.AssumeRole", refuse)
    return client, recorder


def frozen(session: boto3.session.Session) -> Any:
    credentials = session.get_credentials()
    assert credentials is not None
    return credentials.get_frozen_credentials()


@pytest.mark.parametrize("agent_id", ["alice", "Agent-42.prod_B"])
def test_assume_role_request_carries_the_agent_session_tag(sts: Any, calls: Recorder, agent_id: str) -> None:
    assume_agent_session(ROLE, agent_id, sts_client=sts)

    assert calls.requests == [
        {
            "Action": "AssumeRole",
            "Version": "2011-06-15",
            "RoleArn": ROLE,
            "RoleSessionName": f"s3memory-{agent_id}",
            "DurationSeconds": 900,
            "Tags.member.1.Key": "s3memory-agent",
            "Tags.member.1.Value": agent_id,
        }
    ]


def test_session_uses_the_assumed_role_credentials(sts: Any, calls: Recorder) -> None:
    session = assume_agent_session(ROLE, "alice", sts_client=sts, region_name="eu-west-1")

    issued = calls.responses[0]["Credentials"]
    creds = frozen(session)
    assert (creds.access_key, creds.secret_key, creds.token) == (
        issued["AccessKeyId"],
        issued["SecretAccessKey"],
        issued["SessionToken"],
    )
    assert session.region_name == "eu-west-1"
    assert session.get_credentials().method == "s3memory-assume-agent-role"
    # The process's own credentials (the "testing" keys the test env sets) are not used.
    assert creds.access_key != "testing"


def test_clients_from_the_session_sign_with_the_agent_credentials(sts: Any, calls: Recorder) -> None:
    session = assume_agent_session(ROLE, "alice", sts_client=sts, region_name="us-east-1")
    identity = session.client("sts").get_caller_identity()

    assert identity["Arn"] == "arn:aws:sts::123456789012:assumed-role/s3memory-agent-access/s3memory-alice"


def test_long_agent_id_is_cut_to_the_64_character_session_name_but_tagged_in_full(sts: Any, calls: Recorder) -> None:
    agent_id = "a" * 128
    assume_agent_session(ROLE, agent_id, sts_client=sts)

    assert calls.requests[0]["RoleSessionName"] == "s3memory-" + "a" * 55
    assert calls.requests[0]["Tags.member.1.Value"] == agent_id


def test_repeated_calls_reuse_the_cached_credentials(sts: Any, calls: Recorder) -> None:
    first = assume_agent_session(ROLE, "alice", sts_client=sts)
    second = assume_agent_session(ROLE, "alice", sts_client=sts)
    third = assume_agent_session(ROLE, "alice", sts_client=sts)

    assert len(calls.requests) == 1
    assert frozen(first) == frozen(second) == frozen(third)
    assert len(calls.requests) == 1  # reading the credentials did not refresh them


def test_cache_is_per_role_and_agent(sts: Any, calls: Recorder) -> None:
    alice = assume_agent_session(ROLE, "alice", sts_client=sts)
    bob = assume_agent_session(ROLE, "bob", sts_client=sts)
    alice_other_role = assume_agent_session(OTHER_ROLE, "alice", sts_client=sts)
    assume_agent_session(ROLE, "bob", sts_client=sts)

    assert [(r["RoleArn"], r["Tags.member.1.Value"]) for r in calls.requests] == [
        (ROLE, "alice"),
        (ROLE, "bob"),
        (OTHER_ROLE, "alice"),
    ]
    assert len({frozen(alice).access_key, frozen(bob).access_key, frozen(alice_other_role).access_key}) == 3


def test_cache_evicts_the_least_recently_used_agent(sts: Any, calls: Recorder, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(agent_sts, "MAX_CACHED_SESSIONS", 2)
    assume_agent_session(ROLE, "alice", sts_client=sts)
    assume_agent_session(ROLE, "bob", sts_client=sts)
    assume_agent_session(ROLE, "alice", sts_client=sts)  # cached; alice is now the most recent
    assume_agent_session(ROLE, "carol", sts_client=sts)  # evicts bob
    assume_agent_session(ROLE, "alice", sts_client=sts)  # still cached
    assume_agent_session(ROLE, "bob", sts_client=sts)  # assumed again

    assert [r["Tags.member.1.Value"] for r in calls.requests] == ["alice", "bob", "carol", "bob"]


def test_credentials_refresh_only_inside_the_margin_before_expiry(sts: Any, calls: Recorder) -> None:
    clock = Clock()
    session = assume_agent_session(ROLE, "alice", sts_client=sts, refresh_margin_seconds=120, clock=clock)
    expiry = calls.responses[0]["Credentials"]["Expiration"]
    before = frozen(session)

    clock.now = expiry - datetime.timedelta(seconds=121)
    assert frozen(assume_agent_session(ROLE, "alice", sts_client=sts)) == before
    assert len(calls.requests) == 1

    clock.now = expiry - datetime.timedelta(seconds=119)
    after = frozen(assume_agent_session(ROLE, "alice", sts_client=sts))
    assert len(calls.requests) == 2
    assert after != before
    assert after.access_key == calls.responses[1]["Credentials"]["AccessKeyId"]
    assert calls.requests[1]["Tags.member.1.Value"] == "alice"


def test_failed_refresh_keeps_valid_credentials_then_raises_in_the_last_half_of_the_margin(
    sts: Any, calls: Recorder
) -> None:
    clock = Clock()
    session = assume_agent_session(ROLE, "alice", sts_client=sts, refresh_margin_seconds=120, clock=clock)
    expiry = calls.responses[0]["Credentials"]["Expiration"]
    before = frozen(session)

    def refuse(**_: Any) -> None:
        raise RuntimeError("STS unavailable")

    sts.meta.events.register_first("before-call.sts.AssumeRole", refuse)
    clock.now = expiry - datetime.timedelta(seconds=90)  # advisory window: keep the old credentials
    assert frozen(session) == before

    clock.now = expiry - datetime.timedelta(seconds=30)  # mandatory window: the failure surfaces
    with pytest.raises(RuntimeError, match=r"^STS unavailable$"):
        frozen(session)


@pytest.mark.parametrize(
    "agent_id",
    ["", "-alice", ".alice", "_alice", "alice/bob", "alice bob", "alice\n", "ali*", "é", "a" * 129, None, 42],
)
def test_invalid_agent_ids_are_refused_before_any_aws_call(offline_sts: tuple[Any, Recorder], agent_id: Any) -> None:
    client, calls = offline_sts
    with pytest.raises(ValueError, match="^" + re.escape(AGENT_ID_ERROR) + "$"):
        assume_agent_session(ROLE, agent_id, sts_client=client)
    assert calls.requests == []


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"role_arn": "s3memory-agent-access"}, "role_arn must be an IAM role ARN"),
        ({"role_arn": "arn:aws:iam::123456789012:user/alice"}, "role_arn must be an IAM role ARN"),
        ({"duration_seconds": 899}, "duration_seconds must be between 900 and 43200"),
        ({"duration_seconds": 43201}, "duration_seconds must be between 900 and 43200"),
        ({"refresh_margin_seconds": -1}, "refresh_margin_seconds must be at least 0 and less than"),
        ({"refresh_margin_seconds": 900}, "refresh_margin_seconds must be at least 0 and less than"),
        ({"session_name_prefix": "bad prefix"}, "session_name_prefix must be at most 32 characters"),
    ],
)
def test_invalid_options_are_refused_before_any_aws_call(
    offline_sts: tuple[Any, Recorder], kwargs: dict[str, Any], message: str
) -> None:
    client, calls = offline_sts
    arguments: dict[str, Any] = {"role_arn": ROLE, "agent_id": "alice", "sts_client": client, **kwargs}
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        assume_agent_session(**arguments)
    assert calls.requests == []


def test_incomplete_answer_is_refused_without_echoing_credentials() -> None:
    client = boto3.client("sts", region_name="us-east-1")
    secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    with Stubber(client) as stub:
        stub.add_response(
            "assume_role",
            {
                "Credentials": {
                    "AccessKeyId": "ASIAEXAMPLEEXAMPLE01",
                    "SecretAccessKey": secret,
                    "SessionToken": "",
                    "Expiration": datetime.datetime(2030, 1, 1, tzinfo=datetime.timezone.utc),
                }
            },
        )
        with pytest.raises(RuntimeError) as raised:
            assume_agent_session(ROLE, "alice", sts_client=client)
    assert str(raised.value) == "AssumeRole returned incomplete credentials"
    assert secret not in repr(raised.value)
    assert "ASIAEXAMPLEEXAMPLE01" not in repr(raised.value)
