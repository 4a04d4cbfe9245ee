"""The S3 object layer: get / put (conditional) / list / delete, S3 errors → ours through one table.

Knows nothing of paths, encryption or the memory commands; every method is one S3 request
(or one per page / batch), so callers can count what an operation costs.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from s3memory.errors import NotFound, PreconditionFailed, StorageError

from .capabilities import Capabilities, not_implemented
from .errors_table import NOT_IMPLEMENTED, call
from .timestamps import parse_fast

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

DELETE_BATCH = 1000


@dataclass(frozen=True)
class StoredObject:
    body: bytes
    etag: str
    metadata: dict[str, str]
    last_modified: datetime | None = None


@dataclass(frozen=True)
class ObjectInfo:
    key: str
    size: int
    etag: str = ""
    last_modified: datetime | None = None
    metadata: dict[str, str] = field(default_factory=dict)  # filled by `head`, not by listings


@dataclass
class Page:
    objects: list[ObjectInfo] = field(default_factory=list)
    prefixes: list[str] = field(default_factory=list)
    truncated: bool = False


class ObjectStore:
    """One bucket through one boto3 S3 client (thread-safe, shared by worker threads).

    The client is made to parse timestamps without `dateutil` (`timestamps.parse_fast`: the same
    values, a fraction of a listing's CPU), unless its owner set parsers of their own."""

    def __init__(self, s3_client: S3Client, bucket: str) -> None:
        if not bucket:
            raise ValueError("bucket must be a non-empty bucket name")
        parse_fast(s3_client)
        self.s3 = s3_client
        self.bucket = bucket
        self.capabilities = Capabilities()

    def get(self, key: str) -> StoredObject:
        resp = call("GetObject", self.s3.get_object, Bucket=self.bucket, Key=key)
        body = call("GetObject", resp["Body"].read)
        return StoredObject(body, resp.get("ETag", ""), dict(resp.get("Metadata", {})), resp.get("LastModified"))

    def head(self, key: str) -> ObjectInfo | None:
        try:
            resp = call("HeadObject", self.s3.head_object, Bucket=self.bucket, Key=key)
        except NotFound:
            return None
        return ObjectInfo(
            key,
            int(resp.get("ContentLength", 0)),
            resp.get("ETag", ""),
            resp.get("LastModified"),
            dict(resp.get("Metadata", {})),
        )

    def put(
        self,
        key: str,
        body: bytes,
        metadata: Mapping[str, str],
        *,
        if_none_match: bool = False,
        if_match: str | None = None,
        tags: Mapping[str, str] | None = None,
    ) -> str:
        """Write `body`; `if_none_match` creates only, `if_match` replaces only that ETag. Returns the ETag.
        `tags` go with the same request (x-amz-tagging)."""
        kwargs: dict[str, Any] = {"Bucket": self.bucket, "Key": key, "Body": body, "Metadata": dict(metadata)}
        if tags:
            kwargs["Tagging"] = urlencode(dict(tags))
        condition = "put_if_none_match" if if_none_match else "put_if_match" if if_match is not None else ""
        if condition and not self.capabilities.has(condition):
            self._check_compared(key, if_none_match, if_match, "PutObject")
        elif if_none_match:
            kwargs["IfNoneMatch"] = "*"
        elif if_match is not None:
            kwargs["IfMatch"] = if_match
        try:
            resp = call("PutObject", self.s3.put_object, **kwargs)
        except StorageError as err:
            if not (condition and not_implemented(err)):
                raise
            self.capabilities.learn_missing(condition)
            return self.put(key, body, metadata, if_none_match=if_none_match, if_match=if_match, tags=tags)
        return resp.get("ETag", "")

    def put_tags(self, key: str, tags: Mapping[str, str]) -> None:
        """Replace the object's tags (PutObjectTagging: no new object version)."""
        tag_set = [{"Key": k, "Value": v} for k, v in tags.items()]
        call("PutObjectTagging", self.s3.put_object_tagging, Bucket=self.bucket, Key=key, Tagging={"TagSet": tag_set})  # type: ignore[typeddict-item]

    def get_tags(self, key: str) -> dict[str, str]:
        """The object's tags (GetObjectTagging). Raises `NotFound`."""
        resp = call("GetObjectTagging", self.s3.get_object_tagging, Bucket=self.bucket, Key=key)
        return {t["Key"]: t["Value"] for t in resp.get("TagSet", [])}

    def delete(self, key: str, *, if_match: str | None = None, missing_ok: bool = True) -> str | None:
        """Delete `key` (a missing key counts as deleted, or raises `NotFound` without `missing_ok`);
        with `if_match`, only in that version.

        Returns the version id of the delete marker a versioned bucket answers with (no extra
        request: it is in DeleteObject's response), or None (no versioning, or nothing deleted)."""
        kwargs: dict[str, Any] = {"Bucket": self.bucket, "Key": key}
        conditional = if_match is not None and self.capabilities.has("delete_if_match")
        if if_match is not None and not conditional:
            if not self._check_compared(key, False, if_match, "DeleteObject"):
                if missing_ok:
                    return None
                raise NotFound("NoSuchKey", "DeleteObject")
        elif conditional:
            kwargs["IfMatch"] = if_match
        try:
            resp = call("DeleteObject", self.s3.delete_object, **kwargs)
        except NotFound:
            if missing_ok:
                return None
            raise
        except StorageError as err:
            if not (conditional and not_implemented(err)):
                raise
            self.capabilities.learn_missing("delete_if_match")
            return self.delete(key, if_match=if_match, missing_ok=missing_ok)
        marker = resp.get("VersionId") if resp.get("DeleteMarker") else None
        return str(marker) if marker else None

    def _check_compared(self, key: str, if_none_match: bool, if_match: str | None, operation: str) -> bool:
        """The fallback for a condition the store lacks: HEAD and compare (not atomic; see capabilities).

        Raises `PreconditionFailed` as the conditional request would; returns whether the object exists.
        """
        info = self.head(key)
        if (if_none_match and info is not None) or (
            if_match is not None and info is not None and info.etag != if_match
        ):
            raise PreconditionFailed("PreconditionFailed", operation)
        if if_match is not None and info is None and operation == "PutObject":
            raise NotFound("NoSuchKey", operation)
        return info is not None

    def delete_many(self, items: Sequence[tuple[str, str | None]]) -> dict[str, str]:
        """Delete (key, etag-or-None) pairs in batches of 1,000; an ETag deletes only that version.

        Returns {key: error code} for every key that was not deleted (a missing key counts as
        deleted; a key whose ETag no longer matches is "PreconditionFailed").
        """
        if not any(etag for _, etag in items):
            return self._delete_plain([key for key, _ in items])
        if not self.capabilities.has("delete_objects_if_match"):
            return self._delete_compared(items)
        objects: list[Any] = [{"Key": key, "ETag": etag} if etag else {"Key": key} for key, etag in items]
        try:
            failed = {e.get("Key", ""): e.get("Code", "Unknown") for e in self.delete_objects(objects)}
        except StorageError as err:
            if not not_implemented(err):
                raise
            failed = {key: err.code for key, _ in items}
        unsupported = [(key, etag) for key, etag in items if failed.get(key) in NOT_IMPLEMENTED]
        if not unsupported:
            return failed
        self.capabilities.learn_missing("delete_objects_if_match")
        kept = {key: code for key, code in failed.items() if code not in NOT_IMPLEMENTED}
        return {**kept, **self._delete_compared(unsupported)}

    def _delete_plain(self, keys: Sequence[str]) -> dict[str, str]:
        return {e.get("Key", ""): e.get("Code", "Unknown") for e in self.delete_objects([{"Key": k} for k in keys])}

    def _delete_compared(self, items: Sequence[tuple[str, str | None]]) -> dict[str, str]:
        """Check each ETag (HEAD), then delete the ones that still match (see capabilities)."""
        refused: dict[str, str] = {}
        deletable: list[str] = []
        for key, etag in items:
            try:
                if etag and not self._check_compared(key, False, etag, "DeleteObjects"):
                    continue  # already gone
            except PreconditionFailed:
                refused[key] = "PreconditionFailed"
                continue
            deletable.append(key)
        return {**refused, **self._delete_plain(deletable)}

    def delete_objects(self, objects: Sequence[Any]) -> list[Any]:
        """`DeleteObjects` in batches of 1,000; returns the `Errors` entries of every response.

        `DeleteObjects` answers 200 even when keys fail, so each response's `Errors` is read.
        An object or version that no longer exists counts as deleted and is not returned.
        """
        errors: list[Any] = []
        for start in range(0, len(objects), DELETE_BATCH):
            batch = list(objects[start : start + DELETE_BATCH])
            resp = call(
                "DeleteObjects", self.s3.delete_objects, Bucket=self.bucket, Delete={"Objects": batch, "Quiet": True}
            )
            errors += [e for e in resp.get("Errors", []) if e.get("Code") not in ("NoSuchKey", "NoSuchVersion")]
        return errors

    def list_page(
        self,
        prefix: str,
        *,
        delimiter: str | None = None,
        token: str | None = None,
        max_keys: int | None = None,
        start_after: str | None = None,
    ) -> tuple[Page, str | None]:
        """One `ListObjectsV2` request; returns the page and the continuation token (or None)."""
        kwargs: dict[str, Any] = {"Bucket": self.bucket, "Prefix": prefix}
        if delimiter:
            kwargs["Delimiter"] = delimiter
        if token:
            kwargs["ContinuationToken"] = token
        if max_keys:
            kwargs["MaxKeys"] = max_keys
        if start_after:
            kwargs["StartAfter"] = start_after
        resp = call("ListObjectsV2", self.s3.list_objects_v2, **kwargs)
        page = Page(
            [
                ObjectInfo(o["Key"], int(o.get("Size", 0)), o.get("ETag", ""), o.get("LastModified"))
                for o in resp.get("Contents", [])
            ],
            [p["Prefix"] for p in resp.get("CommonPrefixes", [])],
            bool(resp.get("IsTruncated")),
        )
        return page, (resp.get("NextContinuationToken") if page.truncated else None)

    def iter_pages(self, prefix: str, *, delimiter: str | None = None) -> Iterator[Page]:
        token: str | None = None
        while True:
            page, token = self.list_page(prefix, delimiter=delimiter, token=token)
            yield page
            if token is None:
                return

    def list_all(self, prefix: str) -> list[ObjectInfo]:
        return [obj for page in self.iter_pages(prefix) for obj in page.objects]

    def exists_under(self, prefix: str, besides: str | None = None) -> bool:
        """True if any key starts with `prefix` (one request, MaxKeys=1), `besides` not counted
        (MaxKeys=2: a key of ours just written beside the one looked for)."""
        page, _ = self.list_page(prefix, max_keys=1 if besides is None else 2)
        return any(obj.key != besides for obj in page.objects)
