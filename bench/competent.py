"""A competent but unsafe S3 backend for the memory tool: the baseline a capable user would write.

Same strings and same encryption as `naive.NaiveMemory` (which it extends), with every cheap
fix a careful engineer would make, and none of s3memory's safety machinery:

- one KMS data key per process (GenerateDataKey once; Decrypt results cached by wrapped blob);
- directory views take file sizes from the listing (plaintext = Size - 16), no HEADs;
- recursive delete with `DeleteObjects`, 1,000 keys per request;
- directory rename with 16 parallel copies (read, re-encrypt for the new path, PUT), then one
  `DeleteObjects`;
- existence checks of a create sent together.

What it lacks: conditional writes (a concurrent edit is silently overwritten, two creates can
both "win"), intent records (a crash mid-rename leaves the directory half moved for good),
and the secret guard, quotas and integrity commitment. It exists only to be measured against.
"""

from __future__ import annotations

import base64
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from bench.naive import TAG, NaiveError, NaiveMemory
from s3memory.core import messages as fmt
from s3memory.core import paths, tree
from s3memory.core.paths import MemoryPath

WORKERS = 16


class CompetentMemory(NaiveMemory):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._data_key: tuple[bytes, bytes] | None = None  # (plaintext, wrapped)
        self._unwrapped: dict[bytes, bytes] = {}
        self._pool = ThreadPoolExecutor(max_workers=WORKERS)

    def create(self, raw: str, text: str) -> str:
        path = self._parse(raw)
        if path.is_root:
            raise NaiveError(fmt.already_exists(path.display))
        checks = [self._pool.submit(self._exists, path), self._pool.submit(self._is_dir, path)]
        checks += [self._pool.submit(self._exists, a) for a in path.ancestors()]
        exists, is_dir, *parents = [c.result() for c in checks]
        if exists or is_dir:
            raise NaiveError(fmt.already_exists(path.display))
        for ancestor, is_file in zip(path.ancestors(), parents, strict=True):
            if is_file:
                raise NaiveError(fmt.parent_is_file(path.display, ancestor.display))
        self._write(path, text)
        return fmt.created(path.display)

    def rename(self, raw_old: str, raw_new: str) -> str:
        old, new = self._parse(raw_old), self._parse(raw_new)
        if old.is_root:
            raise NaiveError(fmt.cannot_rename_root())
        keys = [] if self._exists(old) else self._list(paths.dir_prefix(self.root, old))
        if not keys:
            return super().rename(raw_old, raw_new)  # a single file (or a missing path): as naive does
        if new.is_within(old):
            raise NaiveError(fmt.destination_exists(new.display) if new == old else fmt.into_itself(old.display))
        if new.is_root or self._exists(new) or self._is_dir(new):
            raise NaiveError(fmt.destination_exists(new.display))

        def move(key: str) -> None:
            src = paths.path_of_key(self.root, key)
            assert src is not None
            text = self._read(src)
            assert text is not None
            self._write(src.rebase(old, new), text)

        list(self._pool.map(move, [key for key, _ in keys]))
        self._delete_keys([key for key, _ in keys])
        return fmt.renamed(old.display, new.display)

    # -- storage, competently --
    def _delete_keys(self, keys: list[str]) -> None:
        for start in range(0, len(keys), 1000):
            batch = [{"Key": key} for key in keys[start : start + 1000]]
            self.s3.delete_objects(Bucket=self.bucket, Delete={"Objects": batch, "Quiet": True})

    def _write(self, path: MemoryPath, text: str) -> None:
        if self._data_key is None:
            resp = self.kms.generate_data_key(
                KeyId=self.kms_key_id, KeySpec="AES_256", EncryptionContext=self._context()
            )
            self._data_key = (resp["Plaintext"], resp["CiphertextBlob"])
            self._unwrapped[resp["CiphertextBlob"]] = resp["Plaintext"]
        plaintext_key, wrapped = self._data_key
        nonce = os.urandom(12)
        body = AESGCM(plaintext_key).encrypt(nonce, text.encode("utf-8"), self._aad(path))
        metadata = {"wk": base64.b64encode(wrapped).decode(), "n": base64.b64encode(nonce).decode()}
        self.s3.put_object(Bucket=self.bucket, Key=self._key(path), Body=body, Metadata=metadata)

    def _unwrap(self, wrapped: bytes) -> bytes:
        if wrapped not in self._unwrapped:
            resp = self.kms.decrypt(CiphertextBlob=wrapped, EncryptionContext=self._context())
            self._unwrapped[wrapped] = resp["Plaintext"]
        return self._unwrapped[wrapped]

    def _fetch(self, path: MemoryPath) -> Any:
        """GetObject's response for `path`, or None when there is no such object."""
        from botocore.exceptions import ClientError

        try:
            return self.s3.get_object(Bucket=self.bucket, Key=self._key(path))
        except ClientError as err:
            if err.response.get("Error", {}).get("Code") in ("NoSuchKey", "404", "NotFound"):
                return None
            raise

    def _read(self, path: MemoryPath) -> str | None:
        obj = self._fetch(path)
        if obj is None:
            return None
        meta = obj["Metadata"]
        key = self._unwrap(base64.b64decode(meta["wk"]))
        plain = AESGCM(key).decrypt(base64.b64decode(meta["n"]), obj["Body"].read(), self._aad(path))
        return plain.decode("utf-8")

    def _entries(self, path: MemoryPath, keys: list[tuple[str, int]]) -> list[tuple[str, str]]:
        """The listing, with sizes from the listing itself (no HEADs)."""
        prefix = paths.dir_prefix(self.root, path)
        files = [
            (segments, max(0, size - TAG))
            for key, size in keys
            if "" not in (segments := tuple(key[len(prefix) :].split("/")))
        ]
        return [(e.shown_size, e.name) for e in tree.entries(files)]
