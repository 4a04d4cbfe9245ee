"""A strong baseline: the memory tool on S3 as a capable engineer who cares about latency writes it.

Same strings, same envelope encryption (one KMS data key per process, made once under a lock,
ciphertext bound to the path) as `competent.CompetentMemory`, which it extends, plus everything
that is cheap to get right:

- checks sent together: a create's directory and ancestor checks, a rename's source, destination
  and ancestor checks, a delete's file and directory probes all go out at once (one round trip);
- the conditional headers S3 gives for free: a create is `If-None-Match: *` (two creates cannot
  both win), an edit is `If-Match` the version it read (a concurrent edit is refused, not lost);
- directory-first lookups: a name without a `.` is listed before it is read as a file;
- a directory rename reads every file in parallel, writes every copy in parallel (each
  `If-None-Match`), then deletes the sources with `DeleteObjects`.

What it still lacks, and s3memory has: intent records (a crash mid-rename or mid-delete leaves
the directory half done for good), retries of a lost conditional race, a secret guard, quotas,
attribution, key rotation and the integrity commitment. It exists only to be measured against.
"""

from __future__ import annotations

import base64
import os
import threading
from concurrent.futures import Future
from typing import Any

from botocore.exceptions import ClientError
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from bench.competent import CompetentMemory
from bench.naive import MAX_VIEW_CHARS, NaiveError
from s3memory.core import messages as fmt
from s3memory.core import paths
from s3memory.core.paths import MemoryPath


class StrongMemory(CompetentMemory):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._key_lock = threading.Lock()
        self._etags: dict[str, str] = {}  # key -> the ETag this process last read or wrote

    # -- commands --
    def view(self, raw: str, view_range: object = None) -> str:
        path = self._parse(raw)
        if not path.is_root and "." not in path.name:  # directory-first: list, then read as a file
            keys = self._list_dir(path)
            if keys:
                lines = fmt.dir_listing(path.display, self._entries(path, keys)).split("\n")
                keep = fmt.fit_lines(lines, MAX_VIEW_CHARS)
                if keep < len(lines):
                    lines = [*lines[:keep], fmt.listing_truncated(path.display, MAX_VIEW_CHARS)]
                return "\n".join(lines)
        return super().view(raw, view_range)  # read as a file first, then list

    def create(self, raw: str, text: str) -> str:
        path = self._parse(raw)
        if path.is_root:
            raise NaiveError(fmt.already_exists(path.display))
        checks = [self._pool.submit(self._is_dir, path)] + [
            self._pool.submit(self._exists, a) for a in path.ancestors()
        ]
        is_dir, *parents = [c.result() for c in checks]
        if is_dir:
            raise NaiveError(fmt.already_exists(path.display))
        for ancestor, is_file in zip(path.ancestors(), parents, strict=True):
            if is_file:
                raise NaiveError(fmt.parent_is_file(path.display, ancestor.display))
        if not self._put(path, text, if_none_match=True):
            raise NaiveError(fmt.already_exists(path.display))
        return fmt.created(path.display)

    def delete(self, raw: str) -> str:
        path = self._parse(raw)
        if path.is_root:
            raise NaiveError(fmt.cannot_delete_root())
        is_file, keys = self._pool.submit(self._exists, path), self._pool.submit(self._list_dir, path)
        if is_file.result():
            self.s3.delete_object(Bucket=self.bucket, Key=self._key(path))
            return fmt.deleted(path.display)
        if not keys.result():
            raise NaiveError(fmt.does_not_exist(path.display))
        self._delete_keys([key for key, _ in keys.result()])
        return fmt.deleted(path.display)

    def rename(self, raw_old: str, raw_new: str) -> str:
        old, new = self._parse(raw_old), self._parse(raw_new)
        if old.is_root:
            raise NaiveError(fmt.cannot_rename_root())
        source: Future[str | None] = self._pool.submit(self._read, old)
        listed = self._pool.submit(self._list_dir, old)
        taken = [self._pool.submit(self._exists, new), self._pool.submit(self._is_dir, new)]
        parents = [self._pool.submit(self._exists, a) for a in new.ancestors()]
        text, keys = source.result(), listed.result()
        if text is None and not keys:
            raise NaiveError(fmt.does_not_exist(old.display))
        if text is None and new.is_within(old):
            raise NaiveError(fmt.destination_exists(new.display) if new == old else fmt.into_itself(old.display))
        if new.is_root or any(t.result() for t in taken):
            raise NaiveError(fmt.destination_exists(new.display))
        for ancestor, is_file in zip(new.ancestors(), parents, strict=True):
            if is_file.result():
                raise NaiveError(fmt.parent_is_file(new.display, ancestor.display))
        if text is not None:
            if not self._put(new, text, if_none_match=True):
                raise NaiveError(fmt.destination_exists(new.display))
            self.s3.delete_object(Bucket=self.bucket, Key=self._key(old))
            return fmt.renamed(old.display, new.display)
        sources = [p for p in (paths.path_of_key(self.root, key) for key, _ in keys) if p is not None]
        texts = list(self._pool.map(self._read, sources))
        moved = list(self._pool.map(lambda pair: self._put(pair[0].rebase(old, new), pair[1] or "", if_none_match=True),
                                    zip(sources, texts, strict=True)))  # fmt: skip
        if not all(moved):
            raise NaiveError(fmt.destination_exists(new.display))
        self._delete_keys([key for key, _ in keys])
        return fmt.renamed(old.display, new.display)

    # -- storage --
    def _list_dir(self, path: MemoryPath) -> list[tuple[str, int]]:
        return self._list(paths.dir_prefix(self.root, path))

    def _data(self) -> tuple[bytes, bytes]:
        with self._key_lock:
            if self._data_key is None:
                resp = self.kms.generate_data_key(
                    KeyId=self.kms_key_id, KeySpec="AES_256", EncryptionContext=self._context()
                )
                self._data_key = (resp["Plaintext"], resp["CiphertextBlob"])
                self._unwrapped[resp["CiphertextBlob"]] = resp["Plaintext"]
            return self._data_key

    def _write(self, path: MemoryPath, text: str) -> None:
        self._put(path, text)

    def _put(self, path: MemoryPath, text: str, *, if_none_match: bool = False, if_match: str | None = None) -> bool:
        """Seal and PUT; False when the condition failed (the object exists / changed)."""
        plaintext_key, wrapped = self._data()
        nonce = os.urandom(12)
        body = AESGCM(plaintext_key).encrypt(nonce, text.encode("utf-8"), self._aad(path))
        metadata = {"wk": base64.b64encode(wrapped).decode(), "n": base64.b64encode(nonce).decode()}
        kwargs: dict[str, Any] = {"Bucket": self.bucket, "Key": self._key(path), "Body": body, "Metadata": metadata}
        if if_none_match:
            kwargs["IfNoneMatch"] = "*"
        elif if_match:
            kwargs["IfMatch"] = if_match
        try:
            resp = self.s3.put_object(**kwargs)
        except ClientError as err:
            if err.response.get("Error", {}).get("Code") in ("PreconditionFailed", "412", "ConditionalRequestConflict"):
                return False
            raise
        self._etags[kwargs["Key"]] = resp["ETag"]
        return True

    def _write_edit(self, path: MemoryPath, text: str) -> None:
        self._put(path, text, if_match=self._etags.get(self._key(path)))

    def _fetch(self, path: MemoryPath) -> Any:
        obj = super()._fetch(path)
        if obj is not None:
            self._etags[self._key(path)] = obj["ETag"]
        return obj
