"""`make dr-drill`: a recovery drill on moto with two regions (docs/disaster-recovery.md).

1. A fleet of agents writes in the primary region (us-east-1); replication copies it to the
   replica region (eu-west-1) as S3 does: same bytes and metadata, new version ids, keys
   interleaved at random (tests/support/replication.py).
2. Mid-session, with the last writes of some agents not replicated yet, the primary region is
   declared lost. The drill counts what the replica lacks (the RPO, in writes) with
   `doctor --replica`, then fails over: `s3memory verify` on the replica must find every object
   readable, and every agent must read its files and write new ones there.
3. The primary returns: what it had and the replica lacked replicates on, what was written on the
   replica replicates back, and `doctor --replica` must report both sides in sync (failback).

Keys come from the local key source: moto's multi-region replica keys do not decrypt a primary
key's ciphertext (moto 5.2), so the KMS side is tested on MiniStack instead
(tests/reliability/test_failover.py, `make test-ministack`), not here.

    python bench/dr_drill.py [--agents 24] [--files 5] [--late 0.1] [--seed 1]
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import os
import random
import sys
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

sys.path[0] = str(Path(__file__).resolve().parents[1])  # the repository, not bench/ (its requests.py)

import boto3  # noqa: E402
from botocore.config import Config  # noqa: E402
from moto import mock_aws  # noqa: E402

from s3memory import LocalKeys, S3MemoryTool  # noqa: E402
from s3memory.cli import main  # noqa: E402
from tests.support.replication import Replicator  # noqa: E402

KEY = bytes(range(32))
SIDES = {
    "primary": ("dr-drill-primary", "dr-drill-primary-keys", "us-east-1"),
    "replica": ("dr-drill-replica", "dr-drill-replica-keys", "eu-west-1"),
}


def cli(side: str, *argv: str) -> tuple[int, str]:
    bucket, keys, region = SIDES[side]
    os.environ.update(S3MEMORY_BUCKET=bucket, S3MEMORY_KEYSTORE_BUCKET=keys, S3MEMORY_REGION=region)
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue()


def tool(s3: Any, side: str, agent: str) -> S3MemoryTool:
    bucket, keys, _ = SIDES[side]
    return S3MemoryTool(bucket=bucket, agent_id=agent, keys=LocalKeys(KEY), s3_client=s3, prefix="agents/",
                        keystore_bucket=keys)  # fmt: skip


def drill(agents: int, files: int, late_share: float, seed: int) -> dict[str, Any]:
    fake = {"AWS_ACCESS_KEY_ID": "drill", "AWS_SECRET_ACCESS_KEY": "drill"}  # moto's; never real AWS
    os.environ.update(fake, S3MEMORY_PREFIX="agents/",
                      S3MEMORY_LOCAL_KEY=base64.b64encode(KEY).decode(), S3MEMORY_FENCE_SECONDS="0")  # fmt: skip
    rng = random.Random(seed)
    pool = Config(max_pool_connections=20)
    clients = {side: boto3.client("s3", region_name=region, config=pool) for side, (_, _, region) in SIDES.items()}
    for side, (bucket, keys, region) in SIDES.items():
        for name in (bucket, keys):
            where = {} if region == "us-east-1" else {"CreateBucketConfiguration": {"LocationConstraint": region}}
            clients[side].create_bucket(Bucket=name, **where)
            clients[side].put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})
    east, west = clients["primary"], clients["replica"]
    memory = Replicator(east, SIDES["primary"][0], west, SIDES["replica"][0], "agents/")
    keystore = Replicator(east, SIDES["primary"][1], west, SIDES["replica"][1], "agents/")
    names = [f"agent-{i:03d}" for i in range(agents)]
    expected: dict[tuple[str, str], str] = {}
    writes = 0
    for agent in names:  # the session before the failure
        t = tool(east, "primary", agent)
        for n in range(files):
            path, text = f"/memories/topic-{n}.md", f"{agent} fact {n}\n"
            t.call({"command": "create", "path": path, "file_text": text})
            expected[(agent, path)] = text
            writes += 1
    replicated = len(memory.run(seed=seed)) + len(keystore.run(seed=seed + 1))
    # mid-session: each agent edits a file; some of those writes are still in flight when the region goes
    in_flight: set[str] = set()
    for agent in names:
        path = f"/memories/topic-{rng.randrange(files)}.md"
        edit = {"command": "str_replace", "path": path, "old_str": "fact", "new_str": "FACT"}
        tool(east, "primary", agent).call(edit)
        expected[(agent, path)] = expected[(agent, path)].replace("fact", "FACT")
        writes += 1
        if rng.random() < late_share:
            in_flight.add(f"agents/{agent}/{path.removeprefix('/memories/')}")
    replicated += len(memory.run(seed=seed + 2, late=in_flight.__contains__))
    # the primary region is lost here: failover
    started = time.monotonic()
    code, out = cli("replica", "doctor", "--replica", SIDES["primary"][0], "--replica-keystore-bucket",
                    SIDES["primary"][1], "--replica-region", "us-east-1", "--json")  # fmt: skip
    lag = json.loads(out)
    code, out = cli("replica", "verify", "--json")
    verified = json.loads(out)
    stale = 0
    for (agent, path), text in expected.items():
        answer = tool(west, "replica", agent).call({"command": "view", "path": path})
        if text.strip() not in str(answer):
            stale += 1
    for agent in names:
        tool(west, "replica", agent).call({"command": "create", "path": "/memories/after-failover.md",
                                           "file_text": "written on the replica\n"})  # fmt: skip
    rto = time.monotonic() - started
    # failback: the primary returns; in-flight writes land, the replica's writes come back
    resumed = len(memory.run())
    back = memory.back()
    returned = len(back.run()) + len(keystore.back().run())
    code_sync, out = cli("primary", "doctor", "--replica", SIDES["replica"][0], "--replica-keystore-bucket",
                         SIDES["replica"][1], "--replica-region", "eu-west-1", "--json")  # fmt: skip
    after = json.loads(out)
    seen = {"command": "view", "path": "/memories/after-failover.md"}
    back_ok = all("written on the replica" in str(tool(east, "primary", a).call(seen)) for a in names)
    return {
        "agents": agents, "writes_before_failure": writes, "versions_replicated": replicated,
        "in_flight_at_failure": len(in_flight),
        "rpo_writes_missing_on_replica": len(lag["differing"]) + len(lag["only_replica"]["objects"]),
        "verify_on_replica": {"exit": code, "verified": verified["verified"], "failed": verified["failed"]},
        "files_older_on_replica": stale, "rto_seconds_measured": round(rto, 2),
        "failback": {"resumed_from_primary": resumed, "returned_from_replica": returned,
                     "in_sync": after["in_sync"], "exit": code_sync, "replica_writes_on_primary": back_ok},
    }  # fmt: skip


def main_() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", type=int, default=24)
    parser.add_argument("--files", type=int, default=5)
    parser.add_argument("--late", type=float, default=0.25, help="share of mid-session writes still in flight")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with mock_aws():
        figures = drill(args.agents, args.files, args.late, args.seed)
    print(json.dumps(figures, indent=2))
    print(
        f"RPO measured: {figures['rpo_writes_missing_on_replica']} of {figures['writes_before_failure']} writes "
        f"(the {figures['in_flight_at_failure']} in flight when the region was lost; the replica serves their "
        "previous version). S3 promises with Replication Time Control: 99.99 % of objects within 15 minutes."
    )
    print(
        f"RTO measured: {figures['rto_seconds_measured']} s from the failover decision to every agent read and "
        "written on the replica (moto, one process; on AWS add the time to switch S3MEMORY_* in the deployment)."
    )
    ok = (figures["verify_on_replica"]["exit"] == 0 and figures["failback"]["in_sync"]
          and figures["failback"]["replica_writes_on_primary"]
          and figures["rpo_writes_missing_on_replica"] == figures["files_older_on_replica"])  # fmt: skip
    print("drill: " + ("PASSED" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main_())
