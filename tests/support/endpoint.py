"""Where the storage-touching tests get S3 and KMS: in-process moto, or any endpoint.

Set `S3MEMORY_TEST_ENDPOINT` (e.g. http://127.0.0.1:4566 for MiniStack or LocalStack) to run the
suite against a real S3 implementation; `S3MEMORY_TEST_BUCKET` names a *scratch* bucket (it is
created if missing and emptied before and after every test, so never point it at data you
keep; under pytest-xdist each worker uses its own, the name with `-gw0`, `-gw1`, ... appended,
so the run can use several workers) and `S3MEMORY_TEST_KMS_KEY_ID` a KMS key to use instead of
creating one. Tests that only
make sense on moto (they patch moto's internals or start moto servers) carry the `moto_only`
marker and are skipped there.
"""

from __future__ import annotations

import os
from typing import Any

ENDPOINT: str | None = os.environ.get("S3MEMORY_TEST_ENDPOINT") or None
ON_MOTO = ENDPOINT is None
KMS_KEY_ID: str | None = os.environ.get("S3MEMORY_TEST_KMS_KEY_ID") or None


def empty_bucket(s3: Any, bucket: str) -> None:
    """Delete every object, version and delete marker in `bucket` (1,000 per request)."""
    for page in s3.get_paginator("list_object_versions").paginate(Bucket=bucket):
        entries = [*page.get("Versions", []), *page.get("DeleteMarkers", [])]
        objects = [{"Key": e["Key"], "VersionId": e["VersionId"]} for e in entries]
        if objects:
            s3.delete_objects(Bucket=bucket, Delete={"Objects": objects, "Quiet": True})
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
        objects = [{"Key": o["Key"]} for o in page.get("Contents", [])]
        if objects:
            s3.delete_objects(Bucket=bucket, Delete={"Objects": objects, "Quiet": True})
