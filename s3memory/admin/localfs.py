"""Local files for `export` and `import`: written and read without following symbolic links.

Writing walks from the export directory one validated segment at a time through directory
file descriptors opened with O_NOFOLLOW, so a symlink planted anywhere below it (or a name
like `..`, which validation already refuses) can never redirect a write outside it. Files
are created 0o600, directories 0o700. Reading never follows a symlink either: links are
reported, not imported. POSIX only (`dir_fd`).
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import stat
import tarfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

FILE_MODE = 0o600
DIR_MODE = 0o700
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
TAR_SUFFIXES = (".tar.gz", ".tgz", ".tar")
_CHUNK = 64 * 1024


def is_tarball(path: Path) -> bool:
    return path.name.endswith(TAR_SUFFIXES)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _create(dir_fd: int | None, name: str | Path, data: bytes, *, replace: bool) -> None:
    """Create `name` 0o600 with `data`; with `replace`, an existing file (or link) is unlinked first."""
    if replace:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=dir_fd)
    fd = os.open(name, _NEW_FILE_FLAGS, FILE_MODE, dir_fd=dir_fd)
    try:
        _write_all(fd, data)
    finally:
        os.close(fd)


class DirWriter:
    """Writes files below `root` by validated segments; never follows a link below `root`."""

    def __init__(self, root: Path, *, replace: bool) -> None:
        root.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        self._root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        self._replace = replace

    def write(self, segments: Sequence[str], data: bytes, mtime: datetime | None = None) -> None:
        fd = os.dup(self._root_fd)
        try:
            for name in segments[:-1]:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, DIR_MODE, dir_fd=fd)
                child = os.open(name, _DIR_FLAGS, dir_fd=fd)  # ELOOP / ENOTDIR on a link or a file
                os.close(fd)
                fd = child
            _create(fd, segments[-1], data, replace=self._replace)
            if mtime is not None:
                stamp = mtime.timestamp()
                os.utime(segments[-1], (stamp, stamp), dir_fd=fd, follow_symlinks=False)
        finally:
            os.close(fd)

    def close(self) -> None:
        os.close(self._root_fd)


class TarWriter:
    """Writes files as members of a new tarball (gzip unless the name ends in `.tar`), 0o600 each."""

    def __init__(self, path: Path, *, replace: bool) -> None:
        if replace:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        fd = os.open(path, _NEW_FILE_FLAGS, FILE_MODE)
        self._file = os.fdopen(fd, "wb")
        if path.name.endswith(".tar"):
            self._tar = tarfile.open(fileobj=self._file, mode="w")  # noqa: SIM115 - closed in close()
        else:
            self._tar = tarfile.open(fileobj=self._file, mode="w:gz")  # noqa: SIM115 - closed in close()

    def write(self, segments: Sequence[str], data: bytes, mtime: datetime | None = None) -> None:
        info = tarfile.TarInfo("/".join(segments))
        info.size = len(data)
        info.mode = FILE_MODE
        info.mtime = int(mtime.timestamp()) if mtime is not None else 0
        self._tar.addfile(info, io.BytesIO(data))

    def close(self) -> None:
        self._tar.close()
        self._file.close()


# --- reading ---------------------------------------------------------------------------


@dataclass(frozen=True)
class LocalFile:
    """A file to import: `rel` is its path below the memory root with "/" separators."""

    rel: str
    size: int
    load: Callable[[], bytes]


@dataclass(frozen=True)
class Unreadable:
    rel: str
    reason: str


def _reader(path: Path) -> Callable[[], bytes]:
    def load() -> bytes:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise OSError("not a regular file")
            return handle.read()

    return load


def walk(base: Path) -> tuple[list[LocalFile], list[Unreadable]]:
    """Regular files below `base`, sorted; links and special files are listed as unreadable."""
    files: list[LocalFile] = []
    skipped: list[Unreadable] = []
    stack: list[tuple[Path, str]] = [(base, "")]
    while stack:
        directory, rel = stack.pop()
        with os.scandir(directory) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                name = f"{rel}{entry.name}"
                if entry.is_symlink():
                    skipped.append(Unreadable(name, "it is a symbolic link (links are not followed)"))
                elif entry.is_dir(follow_symlinks=False):
                    stack.append((Path(entry.path), name + "/"))
                elif entry.is_file(follow_symlinks=False):
                    size = entry.stat(follow_symlinks=False).st_size
                    files.append(LocalFile(name, size, _reader(Path(entry.path))))
                else:
                    skipped.append(Unreadable(name, "it is not a regular file"))
    files.sort(key=lambda f: f.rel)
    skipped.sort(key=lambda s: s.rel)
    return files, skipped


def _constant(data: bytes) -> Callable[[], bytes]:
    return lambda: data


def read_tarball(path: Path, max_bytes: int, spool: Path) -> tuple[list[LocalFile], list[Unreadable]]:
    """Regular-file members of a tarball. Each member is streamed, one at a time and in chunks,
    into a file of its own under `spool` (a private temporary directory the caller removes), and
    read from there when its turn comes: memory holds one member at most, however large the
    tarball (a compressed tarball cannot be read out of order without decompressing it again).
    Members over `max_bytes` are not copied."""
    files: list[LocalFile] = []
    skipped: list[Unreadable] = []
    with tarfile.open(path) as tar:
        for number, member in enumerate(tar):
            name = member.name.removeprefix("./")
            if member.isdir():
                continue
            if not member.isfile():
                skipped.append(Unreadable(name, "it is not a regular file (links are not followed)"))
                continue
            load = _constant(b"")
            if member.size <= max_bytes:
                handle = tar.extractfile(member)
                if handle is not None:
                    copy = spool / f"{number}.member"
                    fd = os.open(copy, _NEW_FILE_FLAGS, FILE_MODE)
                    with os.fdopen(fd, "wb") as out:
                        shutil.copyfileobj(handle, out, _CHUNK)
                    load = _reader(copy)
            files.append(LocalFile(name, member.size, load))
    files.sort(key=lambda f: f.rel)
    skipped.sort(key=lambda s: s.rel)
    return files, skipped
