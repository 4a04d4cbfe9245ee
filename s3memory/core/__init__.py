"""Pure logic: paths, the strings the model sees, text edits, listings, the envelope format, the
secret guard and limits. Nothing here does I/O or imports boto3, botocore or anthropic."""
