"""`memory.explain`: one table words every failure; every error class of `s3memory.errors` has its row."""

from __future__ import annotations

import pytest

from s3memory import errors
from s3memory.errors import (
    AccessDenied,
    ActiveKeyIntegrity,
    AgentErasing,
    CommandError,
    ConditionalConflict,
    ConfigurationError,
    IntegrityError,
    InvalidPath,
    KeyMisconfigured,
    KeyRetired,
    KeysDestroyed,
    KeyUnavailable,
    NamesMismatch,
    NamesUnauthenticated,
    NotFound,
    OutcomeUnknown,
    PreconditionFailed,
    S3MemoryError,
    StorageError,
    StorageMisconfigured,
    StorageRefused,
    StorageUnavailable,
)
from s3memory.memory.explain import (
    FAILURES,
    FIXES,
    cli_failure,
    failure_of,
    for_cli,
    for_model,
    for_report,
)

# Every error class → the class whose row words it. S3MemoryError's own row is the documented
# default (no text for the model: raising the base class is a bug). A new class in errors.py
# fails this test until it is placed here.
WORDED_AS: dict[type[S3MemoryError], type[S3MemoryError]] = {
    S3MemoryError: S3MemoryError,
    ConfigurationError: ConfigurationError,
    CommandError: CommandError,
    InvalidPath: CommandError,
    StorageError: StorageError,
    NotFound: StorageError,
    PreconditionFailed: StorageError,
    ConditionalConflict: StorageError,
    StorageUnavailable: StorageError,
    OutcomeUnknown: OutcomeUnknown,
    StorageRefused: StorageError,
    StorageMisconfigured: StorageMisconfigured,
    AccessDenied: AccessDenied,
    KeyUnavailable: KeyUnavailable,
    KeyMisconfigured: KeyMisconfigured,
    NamesMismatch: NamesMismatch,
    AgentErasing: AgentErasing,
    IntegrityError: IntegrityError,
    KeysDestroyed: KeysDestroyed,
    ActiveKeyIntegrity: ActiveKeyIntegrity,
    KeyRetired: KeyRetired,
    NamesUnauthenticated: NamesUnauthenticated,
}


def sample(cls: type[S3MemoryError], code: str = "SlowDown") -> S3MemoryError:
    if issubclass(cls, CommandError):
        return cls("Error: Invalid path x: it must be a string", code=code)
    if issubclass(cls, StorageError):
        return cls(code, "PutObject")
    if issubclass(cls, KeyUnavailable):
        return cls(code)
    if cls in (IntegrityError, KeysDestroyed, ActiveKeyIntegrity, KeyRetired, NamesUnauthenticated):
        return cls()
    return cls("unexpected")


def test_every_error_class_has_a_row_or_the_documented_default() -> None:
    defined = {value for value in vars(errors).values() if isinstance(value, type) and issubclass(value, S3MemoryError)}
    assert defined == set(WORDED_AS)
    assert set(FAILURES) == set(WORDED_AS.values())
    for cls, row in WORDED_AS.items():
        assert failure_of(sample(cls)) is FAILURES[row], cls.__name__


# (the model's text, with partial=True, the CLI line, the report reason) of each class.
WORDS: dict[type[S3MemoryError], tuple[str, str, str, str]] = {
    CommandError: ("Error: Invalid path x: it must be a string",) * 2
    + ("Invalid path x: it must be a string", "Error: Invalid path x: it must be a string"),
    IntegrityError: (
        "Error: The file /memories/a.md failed its integrity check and cannot be read",
        "Error: The file /memories/a.md failed its integrity check and cannot be read",
        "object failed its integrity check",
        "failed its integrity check",
    ),
    KeysDestroyed: (
        "Error: The file /memories/a.md cannot be read: the keys it was encrypted with were destroyed. "
        "Retrying will not help.",
    )
    * 2
    + ("its keys were destroyed (s3memory shred --keys-only); it can never be read again",) * 2,
    KeyRetired: (
        "Error: The file /memories/a.md cannot be read: the key it was encrypted with was retired by an operator. "
        "Retrying will not help.",
    )
    * 2
    + ("it is sealed under a retired branch key (s3memory retire); it is never read (reseal before retiring)",) * 2,
    ActiveKeyIntegrity: (
        "Error: This memory's encryption key failed its integrity check, so /memories/a.md was not written. "
        "An operator must check the memory's keys (s3memory verify).",
    )
    * 2
    + ("the agent's active branch key failed its integrity check; check its keys (s3memory verify)",) * 2,
    NamesUnauthenticated: (
        "Error: This memory's record of how it stores file names failed its integrity check; nothing was changed. "
        "An operator must check the memory's keys (s3memory verify).",
    )
    * 2
    + (
        "the agent's name mode record failed its integrity check (NamesUnauthenticated): a bucket writer may have "
        "changed it, or it was written before mode records were tagged; check the agent with `s3memory verify "
        "--agent ID`, then record the mode its names must have with `s3memory migrate --agent ID --names MODE`",
    )
    * 2,
    NotFound: (
        "Error: Memory storage refused the request (SlowDown); nothing was changed. Retrying the same request will "
        "not help.",
        "Error: Memory storage refused a request (SlowDown) while changing /memories/a.md. No file was lost: what "
        "could not be moved is still at its old path.",
        "S3 PutObject failed (SlowDown)",
        "S3 PutObject failed (SlowDown)",
    ),
    StorageUnavailable: (
        "Error: Memory storage is unavailable right now (SlowDown); nothing was changed. Try again.",
        "Error: Memory storage is unavailable right now (SlowDown) while changing /memories/a.md. No file was lost; "
        "the unfinished change will be completed by the next command. Try again.",
        "S3 PutObject failed (SlowDown)",
        "S3 PutObject failed (SlowDown)",
    ),
    OutcomeUnknown: (
        "Error: Memory storage is unavailable right now (SlowDown) and did not confirm the change to /memories/a.md; "
        "it may have been applied. View /memories/a.md to check before trying again.",
    )
    * 2
    + ("S3 PutObject failed (SlowDown); the change may have been applied", "S3 PutObject failed (SlowDown)"),
    StorageMisconfigured: (
        "Error: Memory storage is not configured correctly (SlowDown); nothing was changed. An operator must fix "
        "the configuration.",
    )
    * 2
    + ("S3 PutObject failed (SlowDown)", "S3 PutObject failed (SlowDown)"),
    AccessDenied: ("Error: Memory storage refused access (AccessDenied); nothing was changed.",) * 2
    + ("S3 refused access (PutObject: SlowDown); check the IAM policy for this prefix", "access denied (PutObject)"),
    KeyUnavailable: (
        "Error: The encryption key service is unavailable right now (SlowDown); nothing was changed. Try again.",
    )
    * 2
    + ("the key service is unavailable (SlowDown)", "the data key is unavailable (SlowDown)"),
    KeyMisconfigured: (
        "Error: The encryption key cannot be used (SlowDown); nothing was changed. An operator must fix the key "
        "configuration.",
    )
    * 2
    + ("the key service is unavailable (SlowDown)", "the data key is unavailable (SlowDown)"),
    NamesMismatch: (
        "Error: This memory stores its file names in another way than this tool is set up for (SlowDown); nothing "
        "was changed. An operator must fix the configuration.",
    )
    * 2
    + ("SlowDown", "the data key is unavailable (SlowDown)"),
    AgentErasing: (
        "Error: This memory is being erased (AgentErasing); nothing was changed. An operator must finish erasing it "
        "before it can be used again.",
    )
    * 2
    + (
        "the agent is being erased (AgentErasing); run `s3memory shred --agent ID` (or `purge`) again to finish",
        "the agent is being erased",
    ),
}


@pytest.mark.parametrize("cls", list(WORDS), ids=lambda cls: cls.__name__)
def test_each_row_words_its_failure_for_each_audience(cls: type[S3MemoryError]) -> None:
    err = sample(cls)
    got = (for_model(err, "/memories/a.md"), for_model(err, "/memories/a.md", partial=True), for_cli(err))
    assert (*got, for_report(err)) == WORDS[cls]


def test_the_default_row_words_nothing_for_the_model_and_reraises_in_reports() -> None:
    err = S3MemoryError("unexpected")
    with pytest.raises(TypeError) as raised:
        for_model(err, "/memories/a.md")
    assert str(raised.value) == "no model message for S3MemoryError"
    assert for_cli(err) == "unexpected"
    with pytest.raises(S3MemoryError) as reraised:
        for_report(err)
    assert reraised.value is err
    bug = OSError("not ours")
    with pytest.raises(OSError) as reraised_bug:  # noqa: PT011  # the very exception, checked below
        for_report(bug)
    assert reraised_bug.value is bug


def test_an_error_code_has_one_fix_and_the_cli_prints_it() -> None:
    assert len(FIXES) == sum(len(row.fixes) for row in FAILURES.values())
    assert cli_failure(sample(StorageMisconfigured, "NoSuchBucket")) == (
        "the bucket does not exist (NoSuchBucket); check S3MEMORY_BUCKET (--bucket) and S3MEMORY_REGION (--region)",
        True,
    )
    assert cli_failure(CommandError("Error: x", kind="configuration", code="NamesEncrypted")) == (
        'this agent stores encrypted file names (NamesEncrypted); set S3MEMORY_NAMES=encrypted (names="encrypted")',
        True,
    )
    assert cli_failure(CommandError("Error: x", kind="configuration", code="NamesPlain")) == (
        "this agent stores plain file names (NamesPlain); convert it with `s3memory migrate --agent ID --names "
        "encrypted`; if its names should be encrypted already, objects a bucket writer planted under it can make "
        "it look plain: check it with `s3memory verify --agent ID` first",
        True,
    )
    assert cli_failure(sample(KeyMisconfigured, "Unheard")) == (
        "the configuration is not usable (Unheard); check the S3MEMORY_* settings and AWS credentials",
        True,
    )
    assert cli_failure(sample(InvalidPath)) == ("Invalid path x: it must be a string", True)
    assert cli_failure(sample(StorageUnavailable)) == ("S3 PutObject failed (SlowDown)", False)
    assert for_cli(NamesMismatch("NamesMigrating")) == (
        "this agent's file names are being migrated; run `s3memory migrate --agent ID --names MODE` again to "
        "finish (it resumes where it stopped)"
    )


def test_a_settings_error_is_worded_by_its_own_message_and_never_for_the_model() -> None:
    """`from_env`'s ConfigurationError (issue 34 item 4) names the variable: every operator line keeps it."""
    err = ConfigurationError("configuration: S3MEMORY_BUCKET is required")
    assert for_cli(err) == for_report(err) == "configuration: S3MEMORY_BUCKET is required"
    assert cli_failure(err) == ("configuration: S3MEMORY_BUCKET is required", True)
    with pytest.raises(TypeError) as raised:  # raised before a tool exists: the model never sees it
        for_model(err, "/memories/a.md")
    assert str(raised.value) == "no model message for ConfigurationError"


def test_an_unconfirmed_change_names_every_path_it_touched() -> None:
    err = OutcomeUnknown("ConnectionClosedError", "PutObject", paths=("/memories/a.md", "/memories/b.md"))
    assert for_model(err, "/memories/a.md") == (
        "Error: Memory storage is unavailable right now (ConnectionClosedError) and did not confirm the change to "
        "/memories/a.md and /memories/b.md; it may have been applied. View /memories/a.md and /memories/b.md to "
        "check before trying again."
    )
    assert err.kind == "transient"


def test_no_advice_proposes_weaker_file_names() -> None:
    """An agent that looks plain to an encrypted-names tool may have been made to look so by a bucket
    writer: no fix or advice tells the operator to store names in clear (issue 21, item 3)."""
    for code, fix in FIXES.items():
        for text in (fix.fix, fix.advice):
            assert "S3MEMORY_NAMES=plain" not in text, code
            assert "--names plain" not in text, code
            assert 'names="plain"' not in text, code
