"""S3's timestamps parsed without `dateutil`: the same datetimes as botocore's, at about 1 µs each.

botocore parses every timestamp it reads (`LastModified` of each listed key, the `Last-Modified`
header of a GET or HEAD) with `dateutil.parser.parse`, 25 to 35 µs each: half the client CPU of a
1,000-key listing page (`bench/client_cpu.py`: 66 ms of CPU with it, 31 without). S3 sends two
shapes only, ISO 8601 in XML bodies (`2026-11-24T11:47:06.000Z`) and RFC 1123 in headers
(`Tue, 24 Nov 2026 11:47:06 GMT`); `parse` reads those directly and hands anything else (epoch
numbers, other spellings, invalid dates) to botocore's own parser, so every value equals
botocore's (the same instant and UTC offset; the `tzinfo` is a `datetime.timezone` rather than
one of dateutil's classes).

`parse_fast(client)` makes one boto3 client use it, through botocore's `ResponseParserFactory`
(`set_parser_defaults(timestamp_parser=...)`, the hook the AWS CLI uses for its own timestamp
format) installed on that client alone: other clients of the same session are left as they are.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from typing import Any

# 2026-11-24T11:47:06.000Z, or with an offset; 1 to 6 fraction digits (dateutil truncates more).
_ISO = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?(?:(Z)|([+-])(\d\d):(\d\d))", re.ASCII)
# Tue, 24 Nov 2026 11:47:06 GMT (the weekday is not checked: dateutil ignores it too).
_RFC1123 = re.compile(
    r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\d\d) ([A-Z][a-z][a-z]) (\d{4}) (\d\d):(\d\d):(\d\d) GMT", re.ASCII
)
_MONTHS = {m: i for i, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov",
                                       "Dec"), start=1)}  # fmt: skip
_UTC = timezone.utc


def parse(value: Any) -> datetime:
    """A timestamp as botocore's response parsers read it; S3's two shapes without `dateutil`."""
    if isinstance(value, str):
        try:
            fast = _iso(value) if value[:1].isdigit() else _rfc1123(value)
        except ValueError:  # out of range (a 30 February, hour 24): botocore's parser says how
            fast = None
        if fast is not None:
            return fast
    from botocore.utils import parse_timestamp

    parsed: datetime = parse_timestamp(value)
    return parsed


def _iso(value: str) -> datetime | None:
    m = _ISO.fullmatch(value)
    if m is None:
        return None
    year, month, day, hour, minute, second, fraction, zulu, sign, off_h, off_m = m.groups()
    micro = int(fraction.ljust(6, "0")) if fraction else 0
    tz = _UTC
    if not zulu:
        offset = timedelta(hours=int(off_h), minutes=int(off_m))
        if offset:
            tz = timezone(-offset if sign == "-" else offset)
    return datetime(int(year), int(month), int(day), int(hour), int(minute), int(second), micro, tz)


def _rfc1123(value: str) -> datetime | None:
    m = _RFC1123.fullmatch(value)
    month = _MONTHS.get(m.group(2)) if m is not None else None
    if m is None or month is None:
        return None
    day, _, year, hour, minute, second = m.groups()
    return datetime(int(year), month, int(day), int(hour), int(minute), int(second), tzinfo=_UTC)


def parse_fast(client: Any) -> bool:
    """Make `client` parse timestamps with `parse`. Returns whether it now does so because of this call.

    Only a client still on botocore's stock parsers is changed: one whose owner set parser
    defaults of their own (say, timestamps kept as strings) keeps them, as does a client of a
    botocore without the factory on its endpoint (it then parses as before, only slower).
    """
    from botocore.parsers import ResponseParserFactory

    endpoint = getattr(client, "_endpoint", None)
    factory = getattr(endpoint, "_response_parser_factory", None)
    if type(factory) is not ResponseParserFactory or getattr(factory, "_defaults", None) != {}:
        return False
    fast = ResponseParserFactory()
    fast.set_parser_defaults(timestamp_parser=parse)
    endpoint._response_parser_factory = fast  # type: ignore[union-attr]
    return True
