"""Benchmarks of s3memory against a naive S3 backend and the SDK's local-filesystem tool (`make bench`)."""
