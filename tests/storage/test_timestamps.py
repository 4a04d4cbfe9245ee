"""S3's timestamps parsed without dateutil: exact values, botocore's results for every generated
timestamp, and no dateutil call while an ObjectStore lists, heads or gets on the test store."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import boto3
import dateutil.parser
import pytest
from botocore.parsers import ResponseParserFactory
from botocore.utils import parse_timestamp
from hypothesis import given
from hypothesis import strategies as st

from s3memory.storage.store import ObjectStore
from s3memory.storage.timestamps import parse, parse_fast
from tests.support import REGION
from tests.support.endpoint import ENDPOINT
from tests.support.moto_server import new_bucket, running_moto_server, s3_client

UTC = timezone.utc
PLUS_1H30 = timezone(timedelta(minutes=90))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-24T11:47:06.000Z", datetime(2026, 11, 24, 11, 47, 6, tzinfo=UTC)),
        ("2026-11-24T11:47:06Z", datetime(2026, 11, 24, 11, 47, 6, tzinfo=UTC)),
        ("2026-11-24T11:47:06.123Z", datetime(2026, 11, 24, 11, 47, 6, 123000, tzinfo=UTC)),
        ("2026-11-24T11:47:06.5Z", datetime(2026, 11, 24, 11, 47, 6, 500000, tzinfo=UTC)),
        ("2026-11-24T11:47:06.000042Z", datetime(2026, 11, 24, 11, 47, 6, 42, tzinfo=UTC)),
        ("2026-11-24T11:47:06+00:00", datetime(2026, 11, 24, 11, 47, 6, tzinfo=UTC)),
        ("2026-11-24T11:47:06-00:00", datetime(2026, 11, 24, 11, 47, 6, tzinfo=UTC)),
        ("2026-11-24T11:47:06.25+01:30", datetime(2026, 11, 24, 11, 47, 6, 250000, tzinfo=PLUS_1H30)),
        ("2026-11-24T01:02:03-08:00", datetime(2026, 11, 24, 1, 2, 3, tzinfo=timezone(timedelta(hours=-8)))),
        ("Tue, 24 Nov 2026 11:47:06 GMT", datetime(2026, 11, 24, 11, 47, 6, tzinfo=UTC)),
        ("Sun, 01 Feb 2026 00:00:00 GMT", datetime(2026, 2, 1, tzinfo=UTC)),
        # a wrong weekday is ignored, as dateutil ignores it
        ("Mon, 24 Nov 2026 11:47:06 GMT", datetime(2026, 11, 24, 11, 47, 6, tzinfo=UTC)),
    ],
)  # fmt: skip
def test_parse_reads_s3_timestamps_exactly(text: str, expected: datetime) -> None:
    parsed = parse(text)
    assert (parsed, parsed.utcoffset()) == (expected, expected.utcoffset())
    assert (parsed, parsed.utcoffset()) == (parse_timestamp(text), parse_timestamp(text).utcoffset())


@pytest.mark.parametrize(
    "value",
    [
        1764000000,  # epoch seconds, as JSON protocols send them
        1764000000.5,
        "1764000000",
        "2026-11-24T11:47:06.1234567Z",  # seven fraction digits
        "2026-11-24 11:47:06Z",
        "2026-11-24T11:47:06 UTC",
        "2026-11-24T11:47:06+24:00",  # beyond datetime.timezone's range; dateutil takes it
        "Tuesday, 24-Nov-26 11:47:06 GMT",  # RFC 850
        "Tue Nov 24 11:47:06 2026",  # asctime
    ],
)
def test_parse_leaves_other_shapes_to_botocore(value: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = parse_timestamp(value)
    calls: list[Any] = []
    monkeypatch.setattr("botocore.utils.parse_timestamp", lambda v: calls.append(v) or parse_timestamp(v))
    assert parse(value) == expected
    assert calls == [value]


@pytest.mark.parametrize("text", ["2026-02-30T00:00:00Z", "2026-11-24T24:00:00Z", "Tue, 31 Nov 2026 11:47:06 GMT"])
def test_parse_refuses_invalid_dates_as_botocore_does(text: str) -> None:
    with pytest.raises(ValueError, match="Invalid timestamp") as botocore_error:
        parse_timestamp(text)
    with pytest.raises(ValueError, match="Invalid timestamp") as ours:
        parse(text)
    assert str(ours.value) == str(botocore_error.value)


offsets = st.integers(min_value=-(23 * 60 + 59), max_value=23 * 60 + 59).map(lambda m: timezone(timedelta(minutes=m)))
instants = st.datetimes(min_value=datetime(1000, 1, 1), max_value=datetime(9999, 12, 30))


def _iso(moment: datetime, digits: int, zulu: bool) -> str:
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    if digits:
        text += "." + f"{moment.microsecond:06d}"[:digits]
    if zulu:
        return text + "Z"
    minutes = int(moment.utcoffset().total_seconds()) // 60  # type: ignore[union-attr]
    sign, minutes = ("-", -minutes) if minutes < 0 else ("+", minutes)
    return text + f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"


@given(instants, offsets, st.integers(min_value=0, max_value=6), st.booleans())
def test_parse_equals_botocore_for_iso_8601(moment: datetime, tz: timezone, digits: int, zulu: bool) -> None:
    text = _iso(moment.replace(tzinfo=UTC if zulu else tz), digits, zulu)
    ours, theirs = parse(text), parse_timestamp(text)
    assert (ours, ours.utcoffset()) == (theirs, theirs.utcoffset())


@given(instants)
def test_parse_equals_botocore_for_rfc_1123(moment: datetime) -> None:
    text = moment.strftime("%a, %d %b %Y %H:%M:%S GMT")
    ours, theirs = parse(text), parse_timestamp(text)
    assert (ours, ours.utcoffset()) == (theirs, theirs.utcoffset())
    assert ours == moment.replace(microsecond=0, tzinfo=UTC)


@pytest.fixture
def served() -> Iterator[tuple[Any, str]]:
    """(client, bucket) on a store answering from another thread or process (moto in process
    parses timestamps with dateutil itself, in the caller's thread): the test endpoint, or moto's
    server."""
    if ENDPOINT is not None:
        yield s3_client(ENDPOINT), new_bucket(ENDPOINT)
        return
    with running_moto_server() as url:
        yield s3_client(url), new_bucket(url)


def test_object_store_lists_heads_and_gets_without_dateutil(
    served: tuple[Any, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    s3, bucket = served
    for i in range(3):
        s3.put_object(Bucket=bucket, Key=f"t/{i}.md", Body=b"x")
    listed = {o["Key"]: o["LastModified"] for o in s3.list_objects_v2(Bucket=bucket, Prefix="t/")["Contents"]}
    headed = s3.head_object(Bucket=bucket, Key="t/0.md")["LastModified"]
    caller, real = threading.get_ident(), dateutil.parser.parse

    def no_dateutil_here(*args: Any, **kwargs: Any) -> Any:
        if threading.get_ident() == caller:
            raise AssertionError(f"dateutil.parser.parse called with {args}")
        return real(*args, **kwargs)

    monkeypatch.setattr(dateutil.parser, "parse", no_dateutil_here)
    with pytest.raises(AssertionError, match=r"dateutil\.parser\.parse called with"):
        s3.list_objects_v2(Bucket=bucket, Prefix="t/")  # the patch is live: a stock client calls it

    store = ObjectStore(s3, bucket)
    page, token = store.list_page("t/")
    assert (token, {o.key: o.last_modified for o in page.objects}) == (None, listed)
    assert [o.last_modified.utcoffset() for o in page.objects if o.last_modified] == [timedelta(0)] * 3
    info = store.head("t/0.md")
    assert info is not None
    assert info.last_modified == headed
    assert store.get("t/0.md").last_modified == headed


def test_parse_fast_changes_that_client_only(aws: None) -> None:
    session = boto3.session.Session(region_name=REGION)
    ours, other = session.client("s3", endpoint_url=ENDPOINT), session.client("s3", endpoint_url=ENDPOINT)
    assert parse_fast(ours) is True
    assert parse_fast(ours) is False  # already done
    assert ours._endpoint._response_parser_factory.create_parser("rest-xml")._timestamp_parser is parse
    assert other._endpoint._response_parser_factory.create_parser("rest-xml")._timestamp_parser is parse_timestamp


def test_parse_fast_keeps_a_clients_own_parsers(aws: None) -> None:
    client = boto3.client("s3", region_name=REGION, endpoint_url=ENDPOINT)
    own = ResponseParserFactory()
    own.set_parser_defaults(timestamp_parser=str)  # timestamps kept as text, as the AWS CLI can
    client._endpoint._response_parser_factory = own
    assert parse_fast(client) is False
    assert client._endpoint._response_parser_factory is own
    assert own.create_parser("rest-xml")._timestamp_parser is str
