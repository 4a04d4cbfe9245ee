"""A naive S3 backend for the memory tool, written only as a benchmark baseline. Never use it.

It gives the model the same strings as s3memory (it reuses the pure modules `paths`, `edit`,
`format` and `tree`), and by default the same security properties (every object encrypted
under a KMS data key, ciphertext bound to agent and path), but does every storage step the
straightforward way:

- a fresh KMS data key per object: `GenerateDataKey` on every write, `Decrypt` on every read;
- unconditional writes after check-then-act existence checks (HEAD / LIST);
- directory rename: per file, sequentially, read + decrypt + re-encrypt + PUT + DELETE
  (or, with `bind_path=False`, a server-side `CopyObject` + `DeleteObject` per file);
- recursive delete: list, then one `DeleteObject` per file, sequentially;
- directory view: list every page under the directory, then HEAD each shown file for its size.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Iterator
from typing import Any

from botocore.exceptions import ClientError
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from s3memory.core import edit, paths, tree
from s3memory.core import messages as fmt
from s3memory.core.paths import MemoryPath

TAG = 16
MAX_VIEW_CHARS = 100_000


class NaiveError(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _missing(err: ClientError) -> bool:
    return err.response.get("Error", {}).get("Code") in ("NoSuchKey", "404", "NotFound")


class NaiveMemory:
    def __init__(
        self, s3: Any, kms: Any, bucket: str, kms_key_id: str, agent_id: str, *, prefix: str = "agents/",
        bind_path: bool = True,
    ) -> None:  # fmt: skip
        self.s3, self.kms, self.bucket, self.kms_key_id = s3, kms, bucket, kms_key_id
        self.agent_id = agent_id
        self.root = paths.agent_root(prefix, agent_id)
        self.bind_path = bind_path

    # -- commands --
    def call(self, cmd: dict[str, Any]) -> str:
        name = cmd["command"]
        if name == "view":
            return self.view(cmd["path"], cmd.get("view_range"))
        if name == "create":
            return self.create(cmd["path"], cmd["file_text"])
        if name == "str_replace":
            return self.str_replace(cmd["path"], cmd["old_str"], cmd["new_str"])
        if name == "insert":
            return self.insert(cmd["path"], cmd["insert_line"], cmd["insert_text"])
        if name == "delete":
            return self.delete(cmd["path"])
        if name == "rename":
            return self.rename(cmd["old_path"], cmd["new_path"])
        raise NaiveError(f"Error: Unknown memory command {name!r}")

    def view(self, raw: str, view_range: object = None) -> str:
        path = self._parse(raw)
        text = None if path.is_root else self._read(path)
        if text is None:
            keys = self._list(paths.dir_prefix(self.root, path))
            if not keys and not path.is_root:
                raise NaiveError(fmt.does_not_exist_view(path.display))
            lines = fmt.dir_listing(path.display, self._entries(path, keys)).split("\n")
            keep = fmt.fit_lines(lines, MAX_VIEW_CHARS)
            if keep < len(lines):
                lines = [*lines[:keep], fmt.listing_truncated(path.display, MAX_VIEW_CHARS)]
            return "\n".join(lines)
        part = _slice(text, path.display, view_range)
        lines = fmt.numbered(part.lines, part.first)
        keep = fmt.fit_lines(lines, MAX_VIEW_CHARS)
        if keep < len(lines):
            lines = [*lines[:keep], fmt.file_truncated(path.display, part.first + keep, part.n_lines, MAX_VIEW_CHARS)]
        return "\n".join([fmt.file_header(path.display), *lines])

    def create(self, raw: str, text: str) -> str:
        path = self._parse(raw)
        if path.is_root or self._exists(path) or self._is_dir(path):
            raise NaiveError(fmt.already_exists(path.display))
        self._check_parents(path)
        self._write(path, text)
        return fmt.created(path.display)

    def str_replace(self, raw: str, old: str, new: str) -> str:
        path = self._parse(raw)
        text = None if path.is_root else self._read(path)
        if text is None:
            raise NaiveError(fmt.does_not_exist_long(path.display))
        result = _run(lambda: edit.replace_unique(text, old, new, path.display))
        self._write_edit(path, result.text)
        return fmt.edited_snippet(result.snippet, result.snippet_first)

    def insert(self, raw: str, line: object, new: str) -> str:
        path = self._parse(raw)
        text = None if path.is_root else self._read(path)
        if text is None:
            raise NaiveError(fmt.does_not_exist(path.display))
        self._write_edit(path, _run(lambda: edit.insert_text(text, line, new)))
        return fmt.inserted(path.display)

    def delete(self, raw: str) -> str:
        path = self._parse(raw)
        if path.is_root:
            raise NaiveError(fmt.cannot_delete_root())
        if self._exists(path):
            self.s3.delete_object(Bucket=self.bucket, Key=self._key(path))
            return fmt.deleted(path.display)
        keys = self._list(paths.dir_prefix(self.root, path))
        if not keys:
            raise NaiveError(fmt.does_not_exist(path.display))
        self._delete_keys([key for key, _ in keys])
        return fmt.deleted(path.display)

    def _delete_keys(self, keys: list[str]) -> None:
        for key in keys:
            self.s3.delete_object(Bucket=self.bucket, Key=key)

    def rename(self, raw_old: str, raw_new: str) -> str:
        old, new = self._parse(raw_old), self._parse(raw_new)
        if old.is_root:
            raise NaiveError(fmt.cannot_rename_root())
        text = self._read(old)
        keys: list[tuple[str, int]] = []
        if text is None:
            keys = self._list(paths.dir_prefix(self.root, old))
            if not keys:
                raise NaiveError(fmt.does_not_exist(old.display))
            if new.is_within(old):
                raise NaiveError(fmt.destination_exists(new.display) if new == old else fmt.into_itself(old.display))
        if new.is_root or self._exists(new) or self._is_dir(new):
            raise NaiveError(fmt.destination_exists(new.display))
        self._check_parents(new)
        if text is not None:
            self._write(new, text)
            self.s3.delete_object(Bucket=self.bucket, Key=self._key(old))
            return fmt.renamed(old.display, new.display)
        for key, _ in keys:
            src = paths.path_of_key(self.root, key)
            assert src is not None
            dst = src.rebase(old, new)
            if self.bind_path:
                moved = self._read(src)
                assert moved is not None
                self._write(dst, moved)
            else:
                source = {"Bucket": self.bucket, "Key": key}
                self.s3.copy_object(Bucket=self.bucket, Key=self._key(dst), CopySource=source)
            self.s3.delete_object(Bucket=self.bucket, Key=key)
        return fmt.renamed(old.display, new.display)

    # -- storage, the naive way --
    def _parse(self, raw: object) -> MemoryPath:
        return _run(lambda: paths.parse(raw, key_root=self.root))

    def _key(self, path: MemoryPath) -> str:
        return paths.object_key(self.root, path)

    def _aad(self, path: MemoryPath) -> bytes:
        return f"{self.agent_id}\n{path.display if self.bind_path else ''}".encode()

    def _context(self) -> dict[str, str]:
        return {"s3memory:agent": self.agent_id}

    def _write_edit(self, path: MemoryPath, text: str) -> None:
        """The write of a str_replace or insert (the file was just read)."""
        self._write(path, text)

    def _write(self, path: MemoryPath, text: str) -> None:
        resp = self.kms.generate_data_key(KeyId=self.kms_key_id, KeySpec="AES_256", EncryptionContext=self._context())
        nonce = os.urandom(12)
        body = AESGCM(resp["Plaintext"]).encrypt(nonce, text.encode("utf-8"), self._aad(path))
        metadata = {"wk": base64.b64encode(resp["CiphertextBlob"]).decode(), "n": base64.b64encode(nonce).decode()}
        self.s3.put_object(Bucket=self.bucket, Key=self._key(path), Body=body, Metadata=metadata)

    def _read(self, path: MemoryPath) -> str | None:
        try:
            obj = self.s3.get_object(Bucket=self.bucket, Key=self._key(path))
        except ClientError as err:
            if _missing(err):
                return None
            raise
        body, meta = obj["Body"].read(), obj["Metadata"]
        wrapped = base64.b64decode(meta["wk"])
        key = self.kms.decrypt(CiphertextBlob=wrapped, EncryptionContext=self._context())["Plaintext"]
        plain = AESGCM(key).decrypt(base64.b64decode(meta["n"]), body, self._aad(path))
        return plain.decode("utf-8")

    def _exists(self, path: MemoryPath) -> bool:
        return self._head(self._key(path)) is not None

    def _head(self, key: str) -> int | None:
        try:
            return int(self.s3.head_object(Bucket=self.bucket, Key=key)["ContentLength"])
        except ClientError as err:
            if _missing(err):
                return None
            raise

    def _is_dir(self, path: MemoryPath) -> bool:
        resp = self.s3.list_objects_v2(Bucket=self.bucket, Prefix=paths.dir_prefix(self.root, path), MaxKeys=1)
        return bool(resp.get("Contents"))

    def _check_parents(self, path: MemoryPath) -> None:
        for ancestor in path.ancestors():
            if self._exists(ancestor):
                raise NaiveError(fmt.parent_is_file(path.display, ancestor.display))

    def _pages(self, prefix: str) -> Iterator[dict[str, Any]]:
        kwargs: dict[str, Any] = {"Bucket": self.bucket, "Prefix": prefix}
        while True:
            resp = self.s3.list_objects_v2(**kwargs)
            yield resp
            if not resp.get("IsTruncated"):
                return
            kwargs["ContinuationToken"] = resp["NextContinuationToken"]

    def _list(self, prefix: str) -> list[tuple[str, int]]:
        return [(o["Key"], int(o["Size"])) for page in self._pages(prefix) for o in page.get("Contents", [])]

    def _entries(self, path: MemoryPath, keys: list[tuple[str, int]]) -> list[tuple[str, str]]:
        """The listing, with every shown file's size read by its own HEAD request."""
        prefix = paths.dir_prefix(self.root, path)
        files: list[tuple[tuple[str, ...], int]] = []
        for key, _ in keys:
            segments = tuple(key[len(prefix) :].split("/"))
            if "" in segments:
                continue
            shown = len(segments) <= tree.DEPTH and all(tree.is_shown(s) for s in segments)
            size = self._head(key) if shown else 0
            files.append((segments, max(0, (size or 0) - TAG)))
        return [(e.shown_size, e.name) for e in tree.entries(files)]


def _run(fn: Any) -> Any:
    from s3memory.errors import CommandError

    try:
        return fn()
    except CommandError as err:
        raise NaiveError(err.message) from None


def _slice(text: str, display: str, view_range: object) -> edit.Slice:
    return _run(lambda: edit.view_slice(text, display, view_range))
