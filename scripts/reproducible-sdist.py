"""Rewrite an sdist so that two builds of one commit give the same bytes: setuptools writes the
gzip header's time as now (the one byte that differed between builds) and each member's file time,
owner and PAX times as found. Each becomes SOURCE_DATE_EPOCH (or earlier), owner root, in order.

    SOURCE_DATE_EPOCH=... python scripts/reproducible-sdist.py dist/s3memory-X.tar.gz
"""

from __future__ import annotations

import gzip
import io
import os
import sys
import tarfile


def main(path: str) -> None:
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))
    with tarfile.open(path) as source:
        members = []
        for member in source.getmembers():
            data = source.extractfile(member).read() if member.isfile() else None  # type: ignore[union-attr]
            members.append((member, data))
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as target:
        for member, data in sorted(members, key=lambda pair: pair[0].name):
            member.mtime = min(int(member.mtime), epoch)
            member.uid = member.gid = 0
            member.uname = member.gname = ""
            member.pax_headers = {k: v for k, v in member.pax_headers.items() if k not in ("mtime", "atime", "ctime")}
            target.addfile(member, io.BytesIO(data) if data is not None else None)
    with open(path, "wb") as out, gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=epoch) as packed:
        packed.write(buffer.getvalue())


if __name__ == "__main__":
    main(sys.argv[1])
