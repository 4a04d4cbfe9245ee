"""Where the CPU of a command goes: s3memory's own code, botocore, crypto, and moto (the fake server).

`python bench/client_cpu.py` profiles 300 warm `view` commands of a 4 KiB file and 100 `create`s on
in-process moto and prints each share of the process CPU time. moto's share stands for the
network and server (it is not there against S3); the rest is what a client process pays.
"""

from __future__ import annotations

import cProfile
import pstats
import sys
from pathlib import Path

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

GROUPS = {"s3memory": "/s3memory/", "botocore": "/botocore/", "cryptography": "/cryptography/", "moto": "/moto/"}


def main() -> None:
    import boto3
    from botocore.config import Config
    from moto import mock_aws

    from s3memory import LocalKeys, S3MemoryTool

    with mock_aws():
        s3 = boto3.client(
            "s3", region_name="us-east-1", config=Config(max_pool_connections=20),
            aws_access_key_id="x", aws_secret_access_key="x",  # noqa: S106 - moto
        )  # fmt: skip
        s3.create_bucket(Bucket="cpu")
        with S3MemoryTool(bucket="cpu", agent_id="a", keys=LocalKeys(bytes(32)), s3_client=s3) as tool:
            tool.call({"command": "create", "path": "/memories/f.md", "file_text": "x" * 4096})
            profile = cProfile.Profile()
            profile.enable()
            for _ in range(300):
                tool.call({"command": "view", "path": "/memories/f.md"})
            for i in range(100):
                tool.call({"command": "create", "path": f"/memories/c{i}.md", "file_text": "y" * 4096})
            profile.disable()
    stats = pstats.Stats(profile)
    total = stats.total_tt  # type: ignore[attr-defined]
    own = dict.fromkeys(GROUPS, 0.0)
    for (filename, _, _), (_, _, tottime, _, _) in stats.stats.items():  # type: ignore[attr-defined]
        for group, marker in GROUPS.items():
            if marker in filename:
                own[group] += tottime
                break
    requests = 300 + 100 * 3
    print(f"{total:.2f} s CPU for 400 commands ({requests} S3 requests): {1000 * total / requests:.2f} ms per request")
    for group, seconds in own.items():
        share, per_request = 100 * seconds / total, 1000 * seconds / requests
        print(f"  {group:<13} {seconds:6.2f} s  {share:5.1f} %  {per_request:.2f} ms/request")
    rest = total - sum(own.values())
    print(f"  {'other':<13} {rest:6.2f} s  {100 * rest / total:5.1f} %  (stdlib: http, xml, ssl, threads)")


if __name__ == "__main__":
    main()
