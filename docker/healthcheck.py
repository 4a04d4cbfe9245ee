"""The container's health check: is `s3memory mcp` answering HTTP on its port?

Run by the image's HEALTHCHECK with the image's own interpreter (the image has no shell and no
curl). It sends `GET /mcp` with the bearer token from S3MEMORY_MCP_TOKEN: a server that answers
anything but 401 or a 5xx is healthy (without an MCP session, GET /mcp is refused with a 4xx
by the MCP SDK; no session is opened and no memory is read). Exit 0 healthy, 1 not.
S3MEMORY_HEALTHCHECK_URL overrides the address (default http://127.0.0.1:8000/mcp).
"""

from __future__ import annotations

import os
import sys
import urllib.error
import urllib.request


def main() -> int:
    url = os.environ.get("S3MEMORY_HEALTHCHECK_URL", "http://127.0.0.1:8000/mcp")
    request = urllib.request.Request(url, headers={"Accept": "text/event-stream"})  # noqa: S310  # http only
    token = os.environ.get("S3MEMORY_MCP_TOKEN")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=5) as answer:  # noqa: S310
            status = answer.status
    except urllib.error.HTTPError as err:
        status = err.code
    except OSError as err:
        sys.stderr.write(f"healthcheck: {type(err).__name__}\n")
        return 1
    healthy = status != 401 and status < 500
    sys.stderr.write(f"healthcheck: HTTP {status}\n")
    return 0 if healthy else 1


if __name__ == "__main__":
    sys.exit(main())
