"""Which lifecycle rules would expire an agent's branch keys (`{prefix}{agent}/.s3memory/keys/`)."""

from __future__ import annotations

from typing import Any

import pytest

from s3memory.admin.lifecycle import archives_keystores, expires_keystores, keystore_risks

DAYS = {"Expiration": {"Days": 30}}


def rule(scope: dict[str, Any] | None, **extra: Any) -> dict[str, Any]:
    made: dict[str, Any] = {"ID": "r", "Status": "Enabled", **DAYS, **extra}
    if scope is not None:
        made["Filter"] = scope
    return made


@pytest.mark.parametrize(
    ("scope", "expires"),
    [
        ({}, True),  # the whole bucket
        ({"Prefix": ""}, True),
        ({"Prefix": "age"}, True),  # a prefix of "agents/"
        ({"Prefix": "agents/"}, True),
        ({"Prefix": "agents/ann"}, True),  # agents whose id starts with "ann"
        ({"Prefix": "agents/ann/"}, True),
        ({"Prefix": "agents/ann/.s3"}, True),
        ({"Prefix": "agents/ann/.s3memory/keys/0000"}, True),
        ({"Prefix": "agents/ann/notes/"}, False),
        ({"Prefix": "agents/ann/.s3memory/intents/"}, False),
        ({"Prefix": "logs/"}, False),
        ({"Tag": {"Key": "s3memory-accessed", "Value": "2026-01-01"}}, False),  # branch keys carry no tag
        ({"And": {"Prefix": "agents/", "Tags": [{"Key": "k", "Value": "v"}]}}, False),
        ({"And": {"Prefix": "agents/", "ObjectSizeGreaterThan": 10}}, True),  # claims are not empty
        ({"ObjectSizeLessThan": 100}, True),  # index entries are
        (None, True),  # a rule of the old form without Filter and Prefix: the whole bucket
    ],
)
def test_rules_by_scope(scope: dict[str, Any] | None, expires: bool) -> None:
    assert expires_keystores(rule(scope), "agents/") is expires


def test_only_enabled_rules_that_expire_current_objects_count() -> None:
    assert expires_keystores(rule({"Prefix": "agents/"}, Status="Disabled"), "agents/") is False
    noncurrent = {"ID": "n", "Status": "Enabled", "Filter": {}, "NoncurrentVersionExpiration": {"NoncurrentDays": 7}}
    assert expires_keystores(noncurrent, "agents/") is False  # a rewrap's old claim version only
    markers = {"ID": "m", "Status": "Enabled", "Filter": {}, "Expiration": {"ExpiredObjectDeleteMarker": True}}
    assert expires_keystores(markers, "agents/") is False
    dated = {"ID": "d", "Status": "Enabled", "Filter": {}, "Expiration": {"Date": "2030-01-01T00:00:00Z"}}
    assert expires_keystores(dated, "agents/") is True
    assert expires_keystores({"ID": "o", "Status": "Enabled", "Prefix": "agents/x", **DAYS}, "agents/") is True


def test_an_empty_prefix_puts_agents_at_the_bucket_root() -> None:
    assert expires_keystores(rule({"Prefix": "ann/"}), "") is True
    assert expires_keystores(rule({"Prefix": "ann/memo"}), "") is False


def transition(scope: dict[str, Any], *classes: str) -> dict[str, Any]:
    steps = [{"Days": 30 * (n + 1), "StorageClass": name} for n, name in enumerate(classes)]
    return {"ID": "t", "Status": "Enabled", "Filter": scope, "Transitions": steps}


SIZED = {"And": {"Prefix": "agents/", "ObjectSizeGreaterThan": 0}}


@pytest.mark.parametrize(
    ("rule_", "archive"),
    [
        (transition(SIZED, "GLACIER"), "GLACIER"),
        (transition(SIZED, "STANDARD_IA", "DEEP_ARCHIVE"), "DEEP_ARCHIVE"),
        (transition({"Prefix": "agents/"}, "DEEP_ARCHIVE"), "DEEP_ARCHIVE"),  # whatever the 128 KB default
        (transition({}, "GLACIER_IR", "STANDARD_IA", "INTELLIGENT_TIERING"), None),  # readable at once
        (transition({"Prefix": "logs/"}, "GLACIER"), None),
        (transition({"Prefix": "agents/ann/notes/"}, "GLACIER"), None),
        (transition({"Tag": {"Key": "k", "Value": "v"}}, "GLACIER"), None),
        ({**transition({"Prefix": "agents/"}, "GLACIER"), "Status": "Disabled"}, None),
        ({"ID": "old", "Status": "Enabled", "Prefix": "", "Transition": {"Days": 1, "StorageClass": "GLACIER"}},
         "GLACIER"),
    ],
)  # fmt: skip
def test_transitions_to_an_archive_class(rule_: dict[str, Any], archive: str | None) -> None:
    assert archives_keystores(rule_, "agents/") == archive


def test_one_note_per_rule_that_expires_or_archives_branch_keys() -> None:
    configuration = {
        "Rules": [
            rule({"Prefix": "agents/"}, ID="age"),
            transition({"Prefix": "logs/"}, "GLACIER"),
            {**transition({}, "DEEP_ARCHIVE"), "ID": ""},
            {**rule({}, ID="both"), "Transitions": [{"Days": 1, "StorageClass": "GLACIER"}]},
        ],
    }
    assert keystore_risks(configuration, "agents/") == [
        "lifecycle rule age expires objects under the agents' keystores",
        "lifecycle rule (no id) moves objects under the agents' keystores to DEEP_ARCHIVE",
        "lifecycle rule both expires objects under the agents' keystores",
    ]
    assert keystore_risks({"Rules": []}, "agents/") == []
