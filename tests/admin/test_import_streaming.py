"""Importing a tarball holds one member in memory at a time, not the whole archive."""

from __future__ import annotations

import io
import tarfile
import tracemalloc
from pathlib import Path

from s3memory.admin.transfer import local_source

MEMBER = 512 * 1024
MEMBERS = 20  # 10 MiB in all


def make_tarball(path: Path) -> None:
    with tarfile.open(path, "w:gz") as tar:
        for i in range(MEMBERS):
            data = (f"{i:04d}" * (MEMBER // 4)).encode()
            info = tarfile.TarInfo(f"memories/m{i:02d}.md")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def test_tarball_members_are_streamed_not_held(tmp_path: Path) -> None:
    tarball = tmp_path / "backup.tar.gz"
    make_tarball(tarball)
    spool = tmp_path / "spool"
    spool.mkdir(mode=0o700)
    tracemalloc.start()
    try:
        files, skipped = local_source(tarball, 1024 * 1024, spool)
        _, listing_peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        for file in files:
            assert len(file.load()) == MEMBER  # read one at a time, as the importer's jobs do
        _, loading_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (len(files), skipped) == (MEMBERS, [])
    assert [f.rel for f in files] == [f"m{i:02d}.md" for i in range(MEMBERS)]
    assert files[3].load() == ("0003" * (MEMBER // 4)).encode()
    assert listing_peak < 2 * MEMBER  # was the whole archive (10 MiB) before streaming
    assert loading_peak < 3 * MEMBER
    assert sorted(p.stat().st_mode & 0o777 for p in spool.iterdir()) == [0o600] * MEMBERS
