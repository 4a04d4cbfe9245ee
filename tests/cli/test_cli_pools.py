"""The project's own entry points never trip its connection-pool warning (issue 23, item 4).

`s3memory demo`, `chat --embedded` (the same embedded clients), the Lambda example (in
tests/terraform/test_lambda_example.py) and the snippets in the docs build every S3 client with a
connection pool at least as large as the workers that share it.
"""

from __future__ import annotations

import io
import logging
import re
from pathlib import Path

import pytest

from s3memory.core.limits import DEFAULT_MAX_WORKERS
from tests.support.cli import ROOT

POOL_WARNING = "connection pool"
SNIPPET_DOCS = ["README.md", "docs/configuration.md", "terraform/README.md"]


def _pool_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if POOL_WARNING in r.getMessage()]


def test_the_demo_logs_no_connection_pool_warning(caplog: pytest.LogCaptureFixture) -> None:
    from s3memory.cli.demo import run

    caplog.set_level(logging.WARNING, logger="s3memory")
    out = io.StringIO()
    # The support agent's four failures on purpose: an edit and a rename into the read-only mount,
    # deleting the mount point, and a path with '..'.
    assert run(out, raw_object=False) == 4
    assert "Calls made:" in out.getvalue()
    assert _pool_warnings(caplog) == []


def test_the_embedded_clients_of_demo_and_chat_are_sized_for_the_tools_workers(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from s3memory.cli.demo import embedded
    from s3memory.memory.open import check_pool

    caplog.set_level(logging.WARNING, logger="s3memory")
    with embedded() as (s3, kms):
        assert s3.meta.config.max_pool_connections >= DEFAULT_MAX_WORKERS
        assert kms.meta.config.max_pool_connections >= DEFAULT_MAX_WORKERS
        check_pool(s3, DEFAULT_MAX_WORKERS)
    assert _pool_warnings(caplog) == []


def _snippets(doc: str) -> list[str]:
    text = (Path(ROOT) / doc).read_text(encoding="utf-8")
    return [block for block in re.findall(r"```python\n(.*?)```", text, re.S) if "s3_client=" in block]


@pytest.mark.parametrize("doc", SNIPPET_DOCS)
def test_every_doc_snippet_sizes_its_s3_client_for_its_workers(doc: str) -> None:
    snippets = _snippets(doc)
    assert snippets, f"{doc} has no snippet that passes s3_client="
    for block in snippets:
        (client,) = re.findall(r"s3_client=(.*)", block)
        pool = re.search(r"max_pool_connections=(\d+)", client)
        assert pool is not None, f"{doc}: the S3 client keeps boto3's pool of 10: {client.strip()}"
        workers = re.search(r"max_workers=(\d+)", block)
        needed = int(workers.group(1)) if workers else DEFAULT_MAX_WORKERS
        assert int(pool.group(1)) >= needed, f"{doc}: a pool of {pool.group(1)} for {needed} workers"
