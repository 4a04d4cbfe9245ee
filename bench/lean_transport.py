"""A lean S3 transport, for measurement only: botocore's SigV4 signer over a urllib3 pool.

`LeanS3` makes the four requests a warm memory command makes (GetObject, HeadObject, PutObject,
ListObjectsV2) without botocore's client machinery (parameter validation, the endpoint rule set,
the event system, the response parsers), and keeps what that machinery is for on these requests:

- **retries**: botocore's standard mode (the total attempt count, retrying 500/502/503/504, 429
  and throttling error codes, and connection errors, with full-jitter exponential backoff capped
  at 20 s) and the same limits s3memory's `Config` sets;
- **timeouts**: botocore's defaults, 60 s to connect and 60 s per read;
- **checksums**: a CRC32 of every PutObject body in `x-amz-checksum-crc32`, and GetObject asks for
  the object's checksum (`x-amz-checksum-mode: ENABLED`) and checks the body against it, as
  boto3 does by default ("when_supported");
- **signing**: `botocore.auth.S3SigV4Auth`, the same signer and payload hashing rules.

Path-style addressing against one endpoint URL only: no region resolution, virtual-hosted
buckets, access points, FIPS or dual-stack endpoints, no credential refresh, no error shapes
beyond the code. `bench/client_cpu.py` measures its CPU per request beside boto3's.
"""

from __future__ import annotations

import base64
import random
import time
import zlib
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import quote
from xml.etree import ElementTree

import urllib3
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from s3memory.storage.timestamps import parse

NS = "{http://s3.amazonaws.com/doc/2006-03-01/}"
RETRY_STATUS = {429, 500, 502, 503, 504}
THROTTLING = {"Throttling", "ThrottlingException", "SlowDown", "RequestThrottled", "RequestTimeout"}
MAX_BACKOFF = 20.0
Headers = dict[str, str] | None


class LeanError(Exception):
    def __init__(self, status: int, code: str) -> None:
        super().__init__(f"{status} {code}")
        self.status, self.code = status, code


@dataclass(frozen=True)
class Listed:
    key: str
    size: int
    etag: str
    last_modified: datetime


class LeanS3:
    def __init__(
        self,
        endpoint_url: str,
        *,
        region: str,
        access_key: str,
        secret_key: str,
        max_attempts: int = 3,
        pool_size: int = 20,
        connect_timeout: float = 60.0,
        read_timeout: float = 60.0,
    ) -> None:
        self.base = endpoint_url.rstrip("/")
        self.signer = S3SigV4Auth(Credentials(access_key, secret_key), "s3", region)
        self.max_attempts = max_attempts
        self.pool = urllib3.PoolManager(
            maxsize=pool_size, retries=False, timeout=urllib3.Timeout(connect=connect_timeout, read=read_timeout)
        )

    def _send(
        self,
        method: str,
        bucket: str,
        key: str = "",
        query: str = "",
        body: bytes = b"",
        headers: dict[str, str] | None = None,
    ) -> urllib3.BaseHTTPResponse:
        url = f"{self.base}/{bucket}/{quote(key, safe='/~')}" + (f"?{query}" if query else "")
        for attempt in range(1, self.max_attempts + 1):
            request = AWSRequest(method, url, data=body, headers=dict(headers or {}))
            self.signer.add_auth(request)
            try:
                resp = self.pool.request(
                    method, url, body=body or None, headers=dict(request.headers.items()), preload_content=True
                )
            except (urllib3.exceptions.ProtocolError, urllib3.exceptions.TimeoutError, OSError):
                if attempt == self.max_attempts:
                    raise
                self._back_off(attempt)
                continue
            if resp.status < 300:
                return resp
            code = _error_code(resp.data) if resp.data else str(resp.status)
            if attempt < self.max_attempts and (resp.status in RETRY_STATUS or code in THROTTLING):
                self._back_off(attempt)
                continue
            raise LeanError(resp.status, code)
        raise AssertionError("unreachable")

    @staticmethod
    def _back_off(attempt: int) -> None:
        time.sleep(random.random() * min(MAX_BACKOFF, 2 ** (attempt - 1)))

    def get(self, bucket: str, key: str) -> tuple[bytes, str, datetime]:
        resp = self._send("GET", bucket, key, headers={"x-amz-checksum-mode": "ENABLED"})
        body = resp.data
        expected = resp.headers.get("x-amz-checksum-crc32")
        if expected and "-" not in expected and base64.b64decode(expected) != _crc32(body):
            raise LeanError(200, "FlexibleChecksumError")
        return body, resp.headers.get("ETag", ""), parse(resp.headers["Last-Modified"])

    def head(self, bucket: str, key: str) -> tuple[int, str, datetime]:
        resp = self._send("HEAD", bucket, key)
        return (
            int(resp.headers.get("Content-Length", 0)),
            resp.headers.get("ETag", ""),
            parse(resp.headers["Last-Modified"]),
        )

    def put(self, bucket: str, key: str, body: bytes, metadata: dict[str, str], *, if_none_match: bool = False) -> str:
        headers = {f"x-amz-meta-{k}": v for k, v in metadata.items()}
        headers["x-amz-checksum-crc32"] = base64.b64encode(_crc32(body)).decode()
        headers["x-amz-sdk-checksum-algorithm"] = "CRC32"
        if if_none_match:
            headers["If-None-Match"] = "*"
        return str(self._send("PUT", bucket, key, body=body, headers=headers).headers.get("ETag", ""))

    def list(self, bucket: str, prefix: str, *, max_keys: int = 1000) -> tuple[list[Listed], bool]:
        query = f"list-type=2&max-keys={max_keys}&prefix={quote(prefix, safe='')}"
        root = ElementTree.fromstring(self._send("GET", bucket, query=query).data)  # noqa: S314 - our server's XML
        found = [
            Listed(c.findtext(NS + "Key", ""), int(c.findtext(NS + "Size", "0")), c.findtext(NS + "ETag", ""),
                   parse(c.findtext(NS + "LastModified", "")))
            for c in root.iter(NS + "Contents")
        ]  # fmt: skip
        return found, root.findtext(NS + "IsTruncated") == "true"

    def close(self) -> None:
        self.pool.clear()


def _crc32(body: bytes) -> bytes:
    return zlib.crc32(body).to_bytes(4, "big")


def _error_code(data: bytes) -> str:
    try:
        return ElementTree.fromstring(data).findtext("Code", "") or "Unknown"  # noqa: S314 - our server's XML
    except ElementTree.ParseError:
        return "Unknown"
