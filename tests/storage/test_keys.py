"""Key providers and their caches: KMS calls per workload, rotation, bounds, KMS failures.

The tool writes format 2: every object of an agent is sealed under its branch key, made (one KMS
GenerateDataKey) by the agent's first write and unwrapped (one KMS Decrypt) once per process
that meets it. Format-1 objects (a wrapped data key in each header, written by versions before
0.3) are still read; the tests of those build them with `tests.support.legacy.put_format1`.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Callable
from typing import Any

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError
from moto.core.exceptions import JsonRESTError
from moto.kms.models import KmsBackend

from s3memory import KmsKeys, LocalKeys
from s3memory.core import keyring
from s3memory.errors import IntegrityError, KeyMisconfigured
from s3memory.storage.keys import Keys
from tests.support import BUCKET, LOCAL_KEY, CallCounter, branch_of, err, ok
from tests.support.legacy import data_key
from tests.support.legacy import put_format1 as put_legacy


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def kms_ops(counter: CallCounter) -> dict[str, int]:
    return {op: n for op, n in counter.by_op().items() if op.startswith("kms:")}


def wrapped_key_of(s3: Any, key: str) -> str:
    """The wrapped data key in a format-1 object's header (base64)."""
    return str(s3.head_object(Bucket=BUCKET, Key=key)["Metadata"]["s3m-wk"])


def keystore_of(s3: Any, agent: str = "agent-42") -> list[str]:
    """The agent's keystore folder: object names, sorted (claims, then index entries)."""
    folder = f"agents/{agent}/.s3memory/keys/"
    return sorted(o["Key"][len(folder) :] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix=folder).get("Contents", []))


def put_format1(s3: Any, keys: Keys, display: str, text: str, agent: str = "agent-42") -> None:
    """Store a format-1 object under a new data key (wrapped in its header), as versions before 0.3 wrote them."""
    put_legacy(s3, keys, agent, display[len("/memories/") :], text, modified=1)


@pytest.fixture
def kms_keys(kms: Any, kms_key: str) -> Callable[..., KmsKeys]:
    """kms_keys(**cache_limits) → a fresh KmsKeys (empty caches) on the moto KMS client."""

    def factory(**cache: Any) -> KmsKeys:
        return KmsKeys(kms_key, kms_client=kms, **cache)

    return factory


# --- KMS calls per workload ----------------------------------------------------------------


def test_kms_calls_for_40_creates_and_40_views(make_tool: Callable[..., Any], counter: CallCounter) -> None:
    tool = make_tool(use_kms=True)
    counter.reset()
    for i in range(40):
        ok(tool, command="create", path=f"/memories/f{i:02}.md", file_text=f"file {i}\n")
    for i in range(40):
        assert ok(tool, command="view", path=f"/memories/f{i:02}.md").endswith(f"1\tfile {i}")
    # One branch key for every write; every view is opened from the key the process generated.
    assert kms_ops(counter) == {"kms:GenerateDataKey": 1}
    assert counter.count("kms") <= 4


def test_fresh_reader_unwraps_a_branch_key_once(
    make_tool: Callable[..., Any], kms_keys: Callable[..., KmsKeys], counter: CallCounter
) -> None:
    writer = make_tool(use_kms=True)
    for i in range(30):
        ok(writer, command="create", path=f"/memories/n/{i:02}.md", file_text=f"note {i}\n")
    assert kms_ops(counter) == {"kms:GenerateDataKey": 1}
    counter.reset()
    reader = make_tool(keys=kms_keys())
    for i in range(30):
        assert ok(reader, command="view", path=f"/memories/n/{i:02}.md").endswith(f"1\tnote {i}")
    assert kms_ops(counter) == {"kms:Decrypt": 1}
    assert counter.by_op()["s3:GetObject"] == 30


# --- rotation ------------------------------------------------------------------------------


def test_tool_writes_use_one_branch_key_however_many_and_however_long(
    make_tool: Callable[..., Any], kms_keys: Callable[..., KmsKeys], counter: CallCounter, s3: Any
) -> None:
    """Format 2: the agent's branch key seals every write (it rotates on the keystore's schedule,
    key_rotation_days, not by count or age in the process)."""
    clock = Clock()
    tool = make_tool(keys=kms_keys(clock=clock))
    counter.reset()
    for i in range(7):
        ok(tool, command="create", path=f"/memories/f{i}.md", file_text="x")
        clock.now += 30  # 210 s in all, within the cache TTL (300 s)
    assert kms_ops(counter) == {"kms:GenerateDataKey": 1}
    branches = {branch_of(s3, f"agents/agent-42/f{i}.md") for i in range(7)}
    assert len(branches) == 1
    assert keystore_of(s3)[0] == "00000001"
    assert keystore_of(s3)[1].startswith(f"{branches.pop()}.")
    counter.reset()
    reader = make_tool(keys=kms_keys())
    for i in range(7):
        assert ok(reader, command="view", path=f"/memories/f{i}.md").endswith("1\tx")
    assert kms_ops(counter) == {"kms:Decrypt": 1}


def test_unwrapped_keys_expire_after_cache_ttl(
    make_tool: Callable[..., Any], kms_keys: Callable[..., KmsKeys], counter: CallCounter
) -> None:
    ok(make_tool(use_kms=True), command="create", path="/memories/a.md", file_text="a")
    clock = Clock()
    reader = make_tool(keys=kms_keys(cache_ttl=10.0, clock=clock))
    counter.reset()
    ok(reader, command="view", path="/memories/a.md")
    clock.now += 9.9
    ok(reader, command="view", path="/memories/a.md")
    assert kms_ops(counter) == {"kms:Decrypt": 1}
    clock.now += 0.1
    ok(reader, command="view", path="/memories/a.md")
    assert kms_ops(counter) == {"kms:Decrypt": 2}


KMS_SHAPED = bytes(range(96))  # the length of a moto KMS blob (AWS's are longer): never a local wrap's


def test_local_keys_unwrap_a_format_1_data_key_for_its_own_agent_only() -> None:
    keys = LocalKeys(LOCAL_KEY)
    k1 = data_key(keys, "a")
    assert keys.unwrap("a", keys.provider_id, k1.wrapped) == k1.plaintext
    assert LocalKeys(LOCAL_KEY).unwrap("a", keys.provider_id, k1.wrapped) == k1.plaintext
    with pytest.raises(IntegrityError):
        LocalKeys(LOCAL_KEY).unwrap("b", keys.provider_id, k1.wrapped)
    with pytest.raises(IntegrityError):  # its own wrap, the provider field altered: tampering
        keys.unwrap("a", "aws-kms", k1.wrapped)
    with pytest.raises(KeyMisconfigured, match="SealedWithKms"):  # another key source: configuration, not tampering
        keys.unwrap("a", "aws-kms", KMS_SHAPED)


@pytest.mark.parametrize(
    "limits",
    [{"cache_size": 0}, {"cache_ttl": -1.0}, {"cache_ttl": 0}],
)
def test_cache_limits_must_be_positive(limits: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="key cache limits must be positive"):
        LocalKeys(LOCAL_KEY, **limits)


def test_key_providers_do_not_show_key_material() -> None:
    keys = LocalKeys(LOCAL_KEY)
    plaintext, wrapped = keys.new_branch_key("a", keyring.new_branch_id(1))
    keys.caches.unwraps.put(("a", keys.provider_id, wrapped), plaintext)
    shown = repr(keys) + repr(keys.caches) + repr(keys.caches.unwraps)
    assert LOCAL_KEY.hex() not in shown
    assert plaintext.hex() not in shown
    assert repr(LOCAL_KEY) not in shown
    assert repr(plaintext) not in shown
    assert repr(keys) == f"LocalKeys(provider_id='{keys.provider_id}')"


# --- the unwrap cache: bounded, keyed by agent -------------------------------------------


def write_under_three_keys(make_tool: Callable[..., Any], s3: Any, keys: Keys, version: int) -> None:
    """f1, f2, f3 sealed under three different keys: format 2, the tool's writes with the agent's
    branch key rotated (`s3memory rotate`) in between; format 1, three data keys."""
    writer = make_tool(keys=keys)
    for name in ("f1", "f2", "f3"):
        if version == 1:
            put_format1(s3, keys, f"/memories/{name}.md", name)
            continue
        if name != "f1":
            writer.memory.vault.keystore.rotate()
        ok(writer, command="create", path=f"/memories/{name}.md", file_text=name)
    if version == 2:
        assert len({branch_of(s3, f"agents/agent-42/{name}.md") for name in ("f1", "f2", "f3")}) == 3
    else:
        assert len({wrapped_key_of(s3, f"agents/agent-42/{name}.md") for name in ("f1", "f2", "f3")}) == 3


@pytest.mark.parametrize("version", [1, 2])
def test_unwrap_cache_is_bounded_lru(
    make_tool: Callable[..., Any], kms_keys: Callable[..., KmsKeys], counter: CallCounter, s3: Any, version: int
) -> None:
    write_under_three_keys(make_tool, s3, kms_keys(), version)  # three files, three keys
    reader = make_tool(keys=kms_keys(cache_size=2))

    def decrypts_for(*names: str) -> int:
        counter.reset()
        for name in names:
            assert ok(reader, command="view", path=f"/memories/{name}.md").endswith(f"1\t{name}")
        return counter.by_op().get("kms:Decrypt", 0)

    assert decrypts_for("f1", "f2", "f3") == 3  # cache: f2, f3 (f1 evicted)
    assert decrypts_for("f3", "f2") == 0  # both cached; f3 is now the least recent
    assert decrypts_for("f1") == 1  # evicts f3
    assert decrypts_for("f2", "f1") == 0
    assert decrypts_for("f3") == 1


def test_generated_keys_count_against_the_cache_bound(
    make_tool: Callable[..., Any], kms_keys: Callable[..., KmsKeys], counter: CallCounter, s3: Any
) -> None:
    """A writer remembers the branch keys it generated in the same bounded cache."""
    keys = kms_keys(cache_size=2)
    write_under_three_keys(make_tool, s3, keys, 2)
    tool = make_tool(keys=keys)
    ok(tool, command="view", path="/memories")  # its recovery scan (which reads the keystore), done up front
    counter.reset()
    for name in ("f3", "f2"):
        ok(tool, command="view", path=f"/memories/{name}.md")
    assert kms_ops(counter) == {}
    ok(tool, command="view", path="/memories/f1.md")
    assert kms_ops(counter) == {"kms:Decrypt": 1}


def copy_to(s3: Any, key: str, agent: str) -> None:
    """Copy one of agent-42's objects to the same place under `agent`'s root."""
    rel = key[len("agents/agent-42/") :]
    s3.copy_object(Bucket=BUCKET, Key=f"agents/{agent}/{rel}", CopySource={"Bucket": BUCKET, "Key": key})


@pytest.mark.parametrize("version", [1, 2])
def test_unwrap_cache_is_keyed_by_agent(
    make_tool: Callable[..., Any],
    kms_keys: Callable[..., KmsKeys],
    counter: CallCounter,
    s3: Any,
    kms: Any,
    version: int,
) -> None:
    """One KmsKeys shared by two agents: agent-b never gets agent-42's key out of the cache.

    Format 2: agent-42's object and its keystore (claim, index entry) are copied under agent-b, so
    agent-b finds the very branch key agent-42 holds unwrapped in the shared cache; it must still
    ask KMS, with its own encryption context, and KMS refuses. Format 1: the same with the data key
    in the object's header."""
    shared = kms_keys()
    a = make_tool("agent-42", keys=shared)
    b = make_tool("agent-b", keys=shared)
    if version == 2:
        ok(a, command="create", path="/memories/n.md", file_text="for a only")
        for name in keystore_of(s3):
            copy_to(s3, f"agents/agent-42/.s3memory/keys/{name}", "agent-b")
        branch = branch_of(s3, "agents/agent-42/n.md")
        expected_context = {"s3memory:agent": "agent-b", "s3memory:branch": branch}
    else:
        put_format1(s3, shared, "/memories/n.md", "for a only")
        ok(a, command="view", path="/memories/n.md")  # agent-42's data key is now in the shared cache
        expected_context = {"s3memory:agent": "agent-b"}
    copy_to(s3, "agents/agent-42/n.md", "agent-b")
    contexts: list[dict[str, str]] = []
    kms.meta.events.register(
        "before-call.kms.Decrypt", lambda params, **_: contexts.append(json.loads(params["body"])["EncryptionContext"])
    )
    counter.reset()
    assert err(b, command="view", path="/memories/n.md") == (
        "Error: The file /memories/n.md failed its integrity check and cannot be read"
    )
    # The cached key of agent-42 was not used: KMS was asked, with agent-b's context, and refused.
    assert kms_ops(counter) == {"kms:Decrypt": 1}
    assert contexts == [expected_context]
    counter.reset()
    assert ok(a, command="view", path="/memories/n.md").endswith("1\tfor a only")
    assert kms_ops(counter) == {}


# --- what KMS is asked -----------------------------------------------------------------------


def test_generate_data_key_request(
    make_tool: Callable[..., Any], kms_keys: Callable[..., KmsKeys], kms: Any, kms_key: str, s3: Any
) -> None:
    sent: list[dict[str, Any]] = []
    kms.meta.events.register(
        "before-call.kms.GenerateDataKey", lambda params, **_: sent.append(json.loads(params["body"]))
    )
    shared = kms_keys()
    ok(make_tool("agent-42", keys=shared), command="create", path="/memories/a.md", file_text="a")
    ok(make_tool("ann.2_x", keys=shared), command="create", path="/memories/a.md", file_text="a")
    ok(make_tool("agent-42", keys=shared), command="create", path="/memories/b.md", file_text="b")
    # Each agent's first write makes its branch key, bound to the agent and to the key's id.
    first, second = branch_of(s3, "agents/agent-42/a.md"), branch_of(s3, "agents/ann.2_x/a.md")
    assert branch_of(s3, "agents/agent-42/b.md") == first
    assert [keyring.generation_of(first), keyring.generation_of(second)] == [1, 1]
    assert sent == [
        {
            "KeyId": kms_key,
            "KeySpec": "AES_256",
            "EncryptionContext": {"s3memory:agent": "agent-42", "s3memory:branch": first},
        },
        {
            "KeyId": kms_key,
            "KeySpec": "AES_256",
            "EncryptionContext": {"s3memory:agent": "ann.2_x", "s3memory:branch": second},
        },
    ]


def test_decrypt_request(make_tool: Callable[..., Any], kms_keys: Callable[..., KmsKeys], kms: Any, s3: Any) -> None:
    """Format 2: a new process unwraps the branch key the object names, with the agent and the key's id."""
    ok(make_tool(use_kms=True), command="create", path="/memories/a.md", file_text="a")
    branch = branch_of(s3, "agents/agent-42/a.md")
    claim, index_entry = keystore_of(s3)
    record = keyring.parse_index(index_entry)
    assert record is not None
    assert record.branch_id == branch
    wrapped = base64.b64encode(record.wrapped).decode()  # base64 on the wire
    folder = "agents/agent-42/.s3memory/keys/"
    claimed = json.loads(s3.get_object(Bucket=BUCKET, Key=folder + claim)["Body"].read())
    assert claimed["wrapped"] == wrapped  # the claim holds the same wrapped key as the index entry's name
    sent: list[dict[str, Any]] = []
    kms.meta.events.register("before-call.kms.Decrypt", lambda params, **_: sent.append(json.loads(params["body"])))
    ok(make_tool(keys=kms_keys()), command="view", path="/memories/a.md")
    assert sent == [
        {
            "CiphertextBlob": wrapped,
            "EncryptionContext": {"s3memory:agent": "agent-42", "s3memory:branch": branch},
        }
    ]


def test_decrypt_request_for_a_format_1_object(
    make_tool: Callable[..., Any], kms_keys: Callable[..., KmsKeys], kms: Any, s3: Any
) -> None:
    """Format 1: the data key wrapped in the object's header, with the agent alone."""
    put_format1(s3, kms_keys(), "/memories/a.md", "a")
    sent: list[dict[str, Any]] = []
    kms.meta.events.register("before-call.kms.Decrypt", lambda params, **_: sent.append(json.loads(params["body"])))
    assert ok(make_tool(keys=kms_keys()), command="view", path="/memories/a.md").endswith("1\ta")
    assert sent == [
        {
            "CiphertextBlob": wrapped_key_of(s3, "agents/agent-42/a.md"),  # base64 on the wire, as in the header
            "EncryptionContext": {"s3memory:agent": "agent-42"},
        }
    ]


# --- KMS failures ----------------------------------------------------------------------------


@pytest.fixture
def kms_enforces_key_state(monkeypatch: pytest.MonkeyPatch) -> None:
    """moto accepts GenerateDataKey and Decrypt with a disabled key; real KMS answers DisabledException.

    This teaches the fake that one rule (with KMS's message, which names the key ARN); the
    requests still go through botocore and moto's HTTP layer unchanged.
    """

    def check(backend: KmsBackend, key_id: str) -> None:
        key = backend.keys[backend.any_id_to_key_id(key_id)]
        if key.key_state == "Disabled":
            raise JsonRESTError("DisabledException", f"{key.arn} is disabled.")

    original_generate = KmsBackend.generate_data_key
    original_decrypt = KmsBackend.decrypt

    def generate_data_key(self: KmsBackend, key_id: str, *args: Any, **kwargs: Any) -> Any:
        check(self, key_id)
        return original_generate(self, key_id, *args, **kwargs)

    def decrypt(self: KmsBackend, ciphertext_blob: bytes, *args: Any, **kwargs: Any) -> Any:
        check(self, ciphertext_blob[:36].decode("utf-8"))  # moto's blob starts with the key id
        return original_decrypt(self, ciphertext_blob, *args, **kwargs)

    monkeypatch.setattr(KmsBackend, "generate_data_key", generate_data_key)
    monkeypatch.setattr(KmsBackend, "decrypt", decrypt)


@pytest.mark.usefixtures("kms_enforces_key_state")
def test_disabled_kms_key(
    make_tool: Callable[..., Any], kms_keys: Callable[..., KmsKeys], kms: Any, kms_key: str, s3: Any
) -> None:
    holder = make_tool(keys=kms_keys())
    ok(holder, command="create", path="/memories/old.md", file_text="written before")
    arn = kms.describe_key(KeyId=kms_key)["KeyMetadata"]["Arn"]
    kms.disable_key(KeyId=kms_key)
    with pytest.raises(ClientError) as direct:  # the fake now behaves like KMS
        kms.generate_data_key(KeyId=kms_key, KeySpec="AES_256")
    assert arn in str(direct.value)

    expected = (  # a disabled key will not pass by retrying: no "Try again", an operator must act
        "Error: The encryption key cannot be used (DisabledException); "
        "nothing was changed. An operator must fix the key configuration."
    )
    fresh = make_tool(keys=kms_keys())
    messages = [
        err(fresh, command="create", path="/memories/new.md", file_text="x"),
        err(fresh, command="view", path="/memories/old.md"),
        err(fresh, command="str_replace", path="/memories/old.md", old_str="written", new_str="w"),
        err(fresh, command="insert", path="/memories/old.md", insert_line=0, insert_text="x"),
        err(fresh, command="rename", old_path="/memories/old.md", new_path="/memories/moved.md"),
    ]
    assert messages == [expected] * 5
    for message in messages:
        for leak in (kms_key, arn, "arn:aws", BUCKET, "agents/", "Traceback", "botocore"):
            assert leak not in message
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET)["Contents"]]
    keystore = [f"agents/agent-42/.s3memory/keys/{name}" for name in keystore_of(s3)]
    assert len(keystore) == 2  # made by the holder's first write, before the key was disabled
    assert keys == [*keystore, "agents/agent-42/old.md"]
    # A process that already holds the branch key unwrapped keeps working (until its cache TTL).
    assert ok(holder, command="view", path="/memories/old.md").endswith("1\twritten before")
    kms.enable_key(KeyId=kms_key)
    assert ok(fresh, command="view", path="/memories/old.md").endswith("1\twritten before")


@pytest.mark.parametrize(
    ("failure", "code"),
    [  # failures that may pass; configuration failures are in test_kms_configuration_failures_say_so
        (EndpointConnectionError(endpoint_url="https://kms.us-east-1.amazonaws.com/"), "ConnectionError"),
        (
            ClientError({"Error": {"Code": "ThrottlingException", "Message": "Rate exceeded"}}, "GenerateDataKey"),
            "ThrottlingException",
        ),
        (
            ClientError({"Error": {"Code": "KMSInternalException", "Message": "x"}}, "GenerateDataKey"),
            "KMSInternalException",
        ),
    ],
)
def test_kms_failures_are_reported_by_code(
    make_tool: Callable[..., Any], kms: Any, s3: Any, failure: Exception, code: str
) -> None:
    def fail(**_: Any) -> None:
        raise failure

    kms.meta.events.register("before-call.kms.GenerateDataKey", fail)
    tool = make_tool(use_kms=True)
    message = err(tool, command="create", path="/memories/a.md", file_text="a")
    assert (
        message
        == f"Error: The encryption key service is unavailable right now ({code}); nothing was changed. Try again."
    )
    assert "arn:aws" not in message
    assert "amazonaws.com" not in message
    assert s3.list_objects_v2(Bucket=BUCKET)["KeyCount"] == 0


@pytest.mark.parametrize(
    "code", ["AccessDeniedException", "NotFoundException", "DisabledException", "KMSInvalidStateException"]
)
def test_kms_configuration_failures_say_so(make_tool: Callable[..., Any], kms: Any, s3: Any, code: str) -> None:
    message = f"User arn:aws:iam::1:user/x is not authorized for key arn:aws:kms:us-east-1:1:key/k ({code})"

    def fail(**_: Any) -> None:
        raise ClientError({"Error": {"Code": code, "Message": message}}, "GenerateDataKey")

    kms.meta.events.register("before-call.kms.GenerateDataKey", fail)
    tool = make_tool(use_kms=True)
    assert err(tool, command="create", path="/memories/a.md", file_text="a") == (
        f"Error: The encryption key cannot be used ({code}); nothing was changed. "
        "An operator must fix the key configuration."
    )
    assert s3.list_objects_v2(Bucket=BUCKET)["KeyCount"] == 0


def test_kms_refusing_a_wrapped_key_is_an_integrity_failure(
    make_tool: Callable[..., Any], kms_keys: Callable[..., KmsKeys], kms: Any
) -> None:
    ok(make_tool(use_kms=True), command="create", path="/memories/a.md", file_text="a")

    def refuse(**_: Any) -> None:
        raise ClientError({"Error": {"Code": "IncorrectKeyException", "Message": "x"}}, "Decrypt")

    kms.meta.events.register("before-call.kms.Decrypt", refuse)
    assert err(make_tool(keys=kms_keys()), command="view", path="/memories/a.md") == (
        "Error: The file /memories/a.md failed its integrity check and cannot be read"
    )


def test_short_data_key_from_kms_is_refused(make_tool: Callable[..., Any], kms: Any, s3: Any) -> None:
    """A KMS answer that is not a 32-byte key is never used to encrypt."""
    kms.meta.events.register(
        "after-call.kms.GenerateDataKey", lambda parsed, **_: parsed.update(Plaintext=parsed["Plaintext"][:16])
    )
    assert err(make_tool(use_kms=True), command="create", path="/memories/a.md", file_text="a") == (
        "Error: The encryption key service is unavailable right now (InvalidKMSResponse); "
        "nothing was changed. Try again."
    )
    assert s3.list_objects_v2(Bucket=BUCKET)["KeyCount"] == 0


# --- single flight -----------------------------------------------------------------------------


def _at_once(n: int, fn: Callable[[int], str]) -> list[str]:
    barrier = threading.Barrier(n, timeout=20)
    results: list[str] = [""] * n

    def run(i: int) -> None:
        barrier.wait()
        results[i] = fn(i)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    return results


def test_concurrent_first_writes_make_one_kms_call(
    make_tool: Callable[..., Any], kms_keys: Callable[..., KmsKeys], counter: CallCounter, s3: Any
) -> None:
    """Threads of one process that make the agent's first write together wait for one branch key
    (one GenerateDataKey) instead of each making their own."""
    writer = make_tool(keys=kms_keys())
    ok(writer, command="view", path="/memories")  # the instance's first-command recovery scan, done up front
    counter.reset()
    created = _at_once(8, lambda i: ok(writer, command="create", path=f"/memories/f{i}.md", file_text=f"f{i}"))
    assert created == [f"File created successfully at: /memories/f{i}.md" for i in range(8)]
    assert kms_ops(counter) == {"kms:GenerateDataKey": 1}
    assert len(keystore_of(s3)) == 2


def test_concurrent_cache_misses_make_one_kms_call(
    make_tool: Callable[..., Any], kms_keys: Callable[..., KmsKeys], counter: CallCounter
) -> None:
    """Threads that miss the cache together wait for one KMS request instead of making one each: in a
    new process that writes (sealing needs the agent's branch key unwrapped), and in one that reads."""
    ok(make_tool(keys=kms_keys()), command="create", path="/memories/seed.md", file_text="seed")  # the branch key
    writer = make_tool(keys=kms_keys())
    ok(writer, command="view", path="/memories")  # the instance's first-command recovery scan, done up front
    counter.reset()
    created = _at_once(8, lambda i: ok(writer, command="create", path=f"/memories/f{i}.md", file_text=f"f{i}"))
    assert created == [f"File created successfully at: /memories/f{i}.md" for i in range(8)]
    assert kms_ops(counter) == {"kms:Decrypt": 1}

    reader = make_tool(keys=kms_keys())
    ok(reader, command="view", path="/memories")
    counter.reset()
    viewed = _at_once(8, lambda i: ok(reader, command="view", path=f"/memories/f{i}.md"))
    assert [v.split("\n")[1] for v in viewed] == [f"     1\tf{i}" for i in range(8)]
    assert kms_ops(counter) == {"kms:Decrypt": 1}
