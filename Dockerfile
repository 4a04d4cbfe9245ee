# s3memory's MCP server over streamable HTTP, as a container image.
#
#   make dist                                  # the wheel, in dist/
#   docker build -t s3memory-mcp .
#   export S3MEMORY_MCP_TOKEN="$(openssl rand -hex 32)"   # keep it: every client sends it as its bearer token
#   docker run -p 8000:8000 -e S3MEMORY_MCP_TOKEN \
#     -e S3MEMORY_BUCKET=my-memory-bucket -e S3MEMORY_PREFIX=agents/ -e S3MEMORY_KMS_KEY_ID=alias/s3memory \
#     -e AWS_REGION=eu-west-1 s3memory-mcp --agent support-agent-1
#
# The server binds 0.0.0.0:8000 in the container, so it refuses to start without a bearer token
# in S3MEMORY_MCP_TOKEN (docs/mcp.md); AWS credentials come from the usual AWS_* variables or the
# task or pod role. The final stage is distroless: no shell, no package manager, a non-root user,
# and every command in exec form. tests/dist/test_image.py builds the filesystem this image
# holds and runs its entry point and health check where no container runtime is present.

ARG BUILD_IMAGE=python:3.11-slim-bookworm
# Debian 12's Python 3.11, the same minor version as the build stage: the .pyc files stay valid.
ARG RUNTIME_IMAGE=gcr.io/distroless/python3-debian12:nonroot

FROM ${BUILD_IMAGE} AS build
COPY dist/ /dist/
RUN set -- /dist/s3memory-*.whl \
    && python -m pip install --no-cache-dir --disable-pip-version-check --target /app "$1[mcp]" \
    && rm -rf /app/bin
COPY docker/healthcheck.py /app/s3memory_healthcheck.py

FROM ${RUNTIME_IMAGE}
COPY --from=build /app /app
ENV PYTHONPATH=/app PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
USER nonroot
EXPOSE 8000
ENTRYPOINT ["/usr/bin/python3", "-m", "s3memory.cli", "mcp", "--transport", "streamable-http", "--host", "0.0.0.0", "--port", "8000", "--allow-remote"]
HEALTHCHECK --interval=30s --timeout=10s --start-period=20s --retries=3 CMD ["/usr/bin/python3", "/app/s3memory_healthcheck.py"]
