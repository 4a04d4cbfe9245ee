"""The package's version: one string, read by `pyproject.toml`, the CLI, MCP and OpenTelemetry.

Its own module so that a module of the package can name it without importing the package root
(whose lazy API reaches nearly every module: that would be an import cycle)."""

__version__ = "0.1.0"
