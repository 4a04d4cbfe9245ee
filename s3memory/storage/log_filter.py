"""Keep plaintext data keys out of logs: botocore writes every response body at DEBUG."""

from __future__ import annotations

import logging


class _NoPlaintextKeys(logging.Filter):
    """botocore logs every response body at DEBUG, KMS's `Plaintext` data keys included. This filter
    replaces such a record's text before any handler sees it; it never changes log levels."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except (TypeError, ValueError):
            return True
        if "Plaintext" in message:
            record.msg = "Response body: [removed by s3memory: it holds a plaintext data key]"
            record.args = ()
        return True


_LOG_FILTER = _NoPlaintextKeys()
# botocore.parsers writes "Response body: ..." for every response (the only botocore logger that does).
_BODY_LOGGERS = ("botocore.parsers",)


def install_log_filter() -> None:
    """Keep plaintext data keys out of botocore's DEBUG records (idempotent; done by every KMS user)."""
    for name in _BODY_LOGGERS:
        logger = logging.getLogger(name)
        if _LOG_FILTER not in logger.filters:
            logger.addFilter(_LOG_FILTER)
