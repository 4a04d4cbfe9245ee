"""Per-agent AWS credentials: STS `AssumeRole` with the session tag `s3memory-agent=<agent_id>`.

A multi-tenant process (one Lambda serving many agents) holds one set of credentials that can
do nothing with the memory bucket. For each agent it assumes the agent-access role created by
the Terraform module, tagging the session with the agent id; that role's policies grant
`{prefix}${aws:PrincipalTag/s3memory-agent}/*` and KMS data keys whose encryption context names
the same agent. So the IAM boundary, not only this library, keeps agents apart.

    session = assume_agent_session(role_arn, "agent-42")
    tool = S3MemoryTool(bucket=..., agent_id="agent-42", prefix="agents/",
                        s3_client=session.client("s3"),
                        keys=KmsKeys(key_id, kms_client=session.client("kms")))

Credentials are cached in-process per `(role_arn, agent_id)` and refreshed by botocore
`refresh_margin_seconds` before they expire (a failed refresh inside that window is retried on
the next use while the old credentials remain valid; in the last half of the window it raises).
Nothing here logs or formats credentials.
"""

from __future__ import annotations

import datetime
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import boto3
import botocore.session
from botocore.credentials import CredentialProvider, CredentialResolver, RefreshableCredentials

from s3memory.core.paths import validate_agent_id

if TYPE_CHECKING:
    from mypy_boto3_sts import STSClient

AGENT_TAG_KEY = "s3memory-agent"
CREDENTIAL_METHOD = "s3memory-assume-agent-role"

# STS limits: DurationSeconds 900..43200 (the role's MaxSessionDuration may be lower);
# RoleSessionName 2..64 characters of [\w+=,.@-].
MIN_DURATION_SECONDS = 900
MAX_DURATION_SECONDS = 43200
MAX_SESSION_NAME = 64
_SESSION_NAME_CHARS = re.compile(r"[\w+=,.@-]*", re.ASCII)
# arn:<partition>:iam::<12 digits>:role/<path/name>
_ROLE_ARN = re.compile(r"arn:aws[a-z-]*:iam::\d{12}:role/[\w+=,.@/-]{1,512}", re.ASCII)
# Cached agents per process; the least recently used entry goes first.
MAX_CACHED_SESSIONS = 1024

Clock = Callable[[], datetime.datetime]

_cache: OrderedDict[tuple[str, str], RefreshableCredentials] = OrderedDict()
_cache_lock = threading.Lock()


def _utc_now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


def assume_role_request(
    role_arn: str, agent_id: str, *, duration_seconds: int, session_name_prefix: str
) -> dict[str, Any]:
    """The `AssumeRole` parameters for one agent (pure; validated)."""
    validate_agent_id(agent_id)
    if not isinstance(role_arn, str) or _ROLE_ARN.fullmatch(role_arn) is None:
        raise ValueError("role_arn must be an IAM role ARN, e.g. arn:aws:iam::123456789012:role/s3memory-agent-access")
    if not MIN_DURATION_SECONDS <= duration_seconds <= MAX_DURATION_SECONDS:
        raise ValueError(f"duration_seconds must be between {MIN_DURATION_SECONDS} and {MAX_DURATION_SECONDS}")
    if _SESSION_NAME_CHARS.fullmatch(session_name_prefix) is None or len(session_name_prefix) > 32:
        raise ValueError("session_name_prefix must be at most 32 characters of letters, digits and _+=,.@-")
    # The session name shows in CloudTrail; the tag, not the name, is what IAM checks.
    session_name = (session_name_prefix + agent_id)[:MAX_SESSION_NAME]
    if len(session_name) < 2:
        session_name = f"{session_name}-"
    return {
        "RoleArn": role_arn,
        "RoleSessionName": session_name,
        "DurationSeconds": duration_seconds,
        "Tags": [{"Key": AGENT_TAG_KEY, "Value": agent_id}],
    }


def _credential_metadata(response: object) -> dict[str, Any]:
    """botocore's refresh format from an `AssumeRole` answer, checked before use."""
    creds = response.get("Credentials") if isinstance(response, dict) else None
    if not isinstance(creds, dict):
        raise RuntimeError("AssumeRole returned no credentials")
    expiration = creds.get("Expiration")
    if not all(creds.get(k) for k in ("AccessKeyId", "SecretAccessKey", "SessionToken")) or not isinstance(
        expiration, datetime.datetime
    ):
        raise RuntimeError("AssumeRole returned incomplete credentials")
    if expiration.tzinfo is None:
        expiration = expiration.replace(tzinfo=datetime.timezone.utc)
    return {
        "access_key": creds["AccessKeyId"],
        "secret_key": creds["SecretAccessKey"],
        "token": creds["SessionToken"],
        "expiry_time": expiration.isoformat(),
    }


class _Fixed(CredentialProvider):
    """A credential provider that always answers with one (refreshable) credentials object."""

    METHOD = CREDENTIAL_METHOD

    def __init__(self, credentials: RefreshableCredentials) -> None:
        super().__init__()
        self._credentials = credentials

    def load(self) -> RefreshableCredentials:
        return self._credentials


def _new_credentials(
    request: dict[str, Any], sts: STSClient, refresh_margin_seconds: int, clock: Clock
) -> RefreshableCredentials:
    def fetch() -> dict[str, Any]:
        return _credential_metadata(sts.assume_role(**request))

    metadata = fetch()
    return RefreshableCredentials(
        access_key=metadata["access_key"],
        secret_key=metadata["secret_key"],
        token=metadata["token"],
        expiry_time=datetime.datetime.fromisoformat(metadata["expiry_time"]),
        refresh_using=fetch,
        method=CREDENTIAL_METHOD,
        time_fetcher=clock,
        advisory_timeout=refresh_margin_seconds,
        mandatory_timeout=refresh_margin_seconds // 2,
    )


def assume_agent_session(
    role_arn: str,
    agent_id: str,
    *,
    sts_client: STSClient | None = None,
    duration_seconds: int = MIN_DURATION_SECONDS,
    refresh_margin_seconds: int = 120,
    session_name_prefix: str = "s3memory-",
    region_name: str | None = None,
    clock: Clock | None = None,
) -> boto3.session.Session:
    """A boto3 Session acting as `agent_id`: `role_arn` assumed with tag `s3memory-agent=<agent_id>`.

    The first call for a `(role_arn, agent_id)` pair calls `AssumeRole` at once (so a refused
    role or tag fails here); later calls reuse the cached credentials, which botocore refreshes
    `refresh_margin_seconds` before expiry. Options of later calls for a cached pair are ignored
    until it is evicted (`clear_agent_session_cache`). Raises ValueError for an invalid agent id,
    role ARN, duration or margin, before any AWS call.
    """
    request = assume_role_request(
        role_arn, agent_id, duration_seconds=duration_seconds, session_name_prefix=session_name_prefix
    )
    if not 0 <= refresh_margin_seconds < duration_seconds:
        raise ValueError("refresh_margin_seconds must be at least 0 and less than duration_seconds")
    key = (role_arn, agent_id)
    with _cache_lock:
        credentials = _cache.get(key)
        if credentials is not None:
            _cache.move_to_end(key)
    if credentials is None:
        # AssumeRole runs outside the lock, so one slow agent does not hold up the others;
        # two first calls for one agent may both assume the role, and the first stored wins.
        sts = sts_client if sts_client is not None else boto3.client("sts", region_name=region_name)
        fresh = _new_credentials(request, sts, refresh_margin_seconds, clock or _utc_now)
        with _cache_lock:
            credentials = _cache.setdefault(key, fresh)
            _cache.move_to_end(key)
            while len(_cache) > MAX_CACHED_SESSIONS:
                _cache.popitem(last=False)
    core = botocore.session.Session()
    core.register_component("credential_provider", CredentialResolver(providers=[_Fixed(credentials)]))
    return boto3.session.Session(botocore_session=core, region_name=region_name)


def clear_agent_session_cache() -> None:
    """Forget every cached agent credential (tests; or after changing the role's policies)."""
    with _cache_lock:
        _cache.clear()
