"""Who deleted a file: a sealed record beside the delete marker an attributed delete leaves.

An S3 delete marker has no body and no metadata, so it cannot carry the attribution a write seals
into its header. After a delete that a versioned bucket answers with a delete marker, the vault
writes a record at `{agent}/.s3memory/deletions/<name>`, where the name is a hash of the marker's
version id (not secret: a version listing shows it). The record is sealed like any object: its
header holds the attribution (the actor and the command under way: `delete`, `restore`, ...), its
JSON body names the file and the marker, so a record cannot be moved to claim another deletion.

It costs one PutObject, and only when it tells something the marker does not: on a versioned
bucket, when the writer has an actor or the delete is an operator command's (`restore`). A tool
without an actor deleting a file on its own (`delete`) writes nothing extra, as on an unversioned
bucket (no marker, no history to attribute). `history` reads the records (one LIST, one GET each).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from s3memory.core.paths import RESERVED_SEGMENT, MemoryPath
from s3memory.errors import IntegrityError

from .attribution import Attribution

FOLDER = "deletions"
DELETIONS = MemoryPath((RESERVED_SEGMENT, FOLDER))


def record_path(marker_version_id: str) -> MemoryPath:
    name = hashlib.sha256(f"s3memory deletion\0{marker_version_id}".encode()).hexdigest()[:32]
    return MemoryPath((RESERVED_SEGMENT, FOLDER, name))


def worth_recording(record: Attribution | None) -> bool:
    """Whether a delete's attribution says more than its marker: an actor, or an operator's command."""
    return record is not None and (bool(record.actor) or record.command not in ("", "delete"))


def body(path: MemoryPath, marker_version_id: str) -> str:
    """The record's text: the file and the marker it attributes."""
    return json.dumps({"v": 1, "path": path.display, "marker": marker_version_id}, separators=(",", ":"))


@dataclass(frozen=True)
class Deletion:
    path: str
    marker: str

    @classmethod
    def from_json(cls, text: str) -> Deletion:
        try:
            data = json.loads(text)
            if data["v"] != 1 or not isinstance(data["path"], str) or not isinstance(data["marker"], str):
                raise ValueError("not a deletion record")
            return cls(data["path"], data["marker"])
        except (KeyError, TypeError, ValueError):
            raise IntegrityError() from None
