"""S3 requests only operators make: object versions, and metadata replaced in place.

`AdminStore` extends the tool's `ObjectStore` (same client, same error table) with the calls
behind `purge` (ListObjectVersions, DeleteObjects by version) and `rewrap` (HeadObject for
the metadata, CopyObject onto itself). Each method is one S3 request, or one per page.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from s3memory.errors import NotFound, StorageError

from .capabilities import not_implemented
from .errors_table import call
from .store import ObjectStore, StoredObject


@dataclass(frozen=True)
class Version:
    """One version of an object, or a delete marker. `version_id` is "null" in an unversioned bucket."""

    key: str
    version_id: str
    delete_marker: bool
    size: int = 0
    last_modified: datetime | None = field(default=None, compare=False)
    latest: bool = field(default=False, compare=False)


@dataclass(frozen=True)
class Head:
    etag: str
    metadata: dict[str, str]


class AdminStore(ObjectStore):
    def get_version(self, key: str, version_id: str) -> StoredObject:
        """One version of an object (GetObject with VersionId). Raises `NotFound`."""
        resp = call("GetObject", self.s3.get_object, **self._version(key, version_id))
        body = call("GetObject", resp["Body"].read)
        return StoredObject(body, resp.get("ETag", ""), dict(resp.get("Metadata", {})), resp.get("LastModified"))

    def version_metadata(self, key: str, version_id: str) -> dict[str, str]:
        """One version's user metadata (HeadObject with VersionId). Raises `NotFound`."""
        resp = call("HeadObject", self.s3.head_object, **self._version(key, version_id))
        return dict(resp.get("Metadata", {}))

    def _version(self, key: str, version_id: str) -> dict[str, Any]:
        """Request parameters for one version; "null" (an unversioned bucket's only version) is
        asked for without VersionId, which some S3 implementations refuse to take."""
        request: dict[str, Any] = {"Bucket": self.bucket, "Key": key}
        if version_id != "null":
            request["VersionId"] = version_id
        return request

    def versioning(self) -> str:
        """The bucket's versioning status: "Enabled", "Suspended" or "" (never enabled)."""
        return str(call("GetBucketVersioning", self.s3.get_bucket_versioning, Bucket=self.bucket).get("Status", ""))

    def head_metadata(self, key: str) -> Head | None:
        """The object's ETag and user metadata (one HeadObject); None if it does not exist."""
        info = self.head(key)
        return None if info is None else Head(info.etag, info.metadata)

    def replace_metadata(self, key: str, metadata: Mapping[str, str], *, if_match: str) -> str:
        """Copy the object onto itself with new user metadata, only if it still has ETag `if_match`.

        The body is copied by S3 unchanged. Raises `PreconditionFailed` if the object changed.
        Returns the new ETag. A store without `CopySourceIfMatch` gets a HEAD-compare first.
        """
        request: dict[str, Any] = {
            "Bucket": self.bucket,
            "Key": key,
            "CopySource": {"Bucket": self.bucket, "Key": key},
            "MetadataDirective": "REPLACE",
            "Metadata": dict(metadata),
        }
        conditional = self.capabilities.has("copy_if_match")
        if conditional:
            request["CopySourceIfMatch"] = if_match
        elif not self._check_compared(key, False, if_match, "CopyObject"):
            raise NotFound("NoSuchKey", "CopyObject")
        try:
            resp = call("CopyObject", self.s3.copy_object, **request)
        except StorageError as err:
            if not (conditional and not_implemented(err)):
                raise
            self.capabilities.learn_missing("copy_if_match")
            return self.replace_metadata(key, metadata, if_match=if_match)
        return str(resp.get("CopyObjectResult", {}).get("ETag", ""))

    def iter_versions(self, prefix: str) -> Iterator[list[Version]]:
        """Pages of every version and delete marker under `prefix` (ListObjectVersions)."""
        kwargs: dict[str, Any] = {"Bucket": self.bucket, "Prefix": prefix}
        while True:
            resp = call("ListObjectVersions", self.s3.list_object_versions, **kwargs)
            page = [
                Version(
                    v["Key"],
                    v.get("VersionId") or "null",
                    False,
                    int(v.get("Size", 0)),
                    v.get("LastModified"),
                    bool(v.get("IsLatest")),
                )
                for v in resp.get("Versions", [])
            ]
            page += [
                Version(m["Key"], m.get("VersionId") or "null", True, 0, m.get("LastModified"), bool(m.get("IsLatest")))
                for m in resp.get("DeleteMarkers", [])
            ]
            yield page
            if not resp.get("IsTruncated"):
                return
            kwargs["KeyMarker"] = resp.get("NextKeyMarker", "")
            kwargs["VersionIdMarker"] = resp.get("NextVersionIdMarker", "")

    def delete_versions(self, versions: Sequence[Version]) -> dict[Version, str]:
        """Delete exactly these versions (at most 1,000 per DeleteObjects request).

        Returns {version: error code} for each one S3 listed under `Errors` (the request answers
        200 even then). A version that no longer exists counts as deleted.
        """
        by_id = {(v.key, v.version_id): v for v in versions}
        failed: dict[Version, str] = {}
        for error in self.delete_objects([{"Key": v.key, "VersionId": v.version_id} for v in versions]):
            key, version_id = error.get("Key", ""), error.get("VersionId") or "null"
            failed[by_id.get((key, version_id)) or Version(key, version_id, False)] = error.get("Code", "Unknown")
        return failed
