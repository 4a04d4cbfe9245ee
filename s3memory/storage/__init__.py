"""S3 and KMS: the object store and its error table, key providers and caches, an agent's key
layout, the vault (seal on write, authenticate on read), listings, clients and bounded
concurrency. Imports only `core` (and `errors`)."""
