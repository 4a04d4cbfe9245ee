"""`s3memory mcp`: the memory tool as a Model Context Protocol server (stdio or streamable HTTP).

An adapter like `s3memory.tool`, for MCP clients instead of the SDK's tool runner: one tool,
`memory`, answered by the same `Memory` with the same strings. It never imports `anthropic`.

- `schema`: the tool's name, description and input schema (pure data).
- `dispatch`: builds `Memory` from `Settings` (the calls go through `s3memory.memory.commands.answer`).
- `auth`: the bearer-token check for HTTP, and what counts as a loopback host.
- `server`: the MCP server and its two transports.

Nothing here is imported by `import s3memory`; the `mcp` package is needed only by `server`.
"""
