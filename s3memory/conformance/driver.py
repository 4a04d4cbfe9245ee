"""Drive a memory tool as the SDK's tool runner does: `call(input)`, sync or async, and read its answer.

A returned string is a success. An exception is an error result (`is_error: true`): an exception
with a `content` attribute (the SDK's `ToolError`) gives that content; any other exception is sent by
the tool runner as its `repr`, which the kit reports as such. Duck typing only: no `anthropic` import.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from .model import Input

Answer = tuple[str, bool]  # (text, is_error)


def is_async(tool: object) -> bool:
    call = getattr(tool, "call", None)
    return inspect.iscoroutinefunction(call)


def _text(content: object) -> str:
    """A ToolError's content as the model reads it: a string, or its text blocks joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(block.get("text", "")) for block in content if isinstance(block, dict))
    return repr(content)


def _error(exc: BaseException) -> Answer:
    content = getattr(exc, "content", None)
    if content is not None:
        return _text(content), True
    return f"(not a ToolError) {exc!r}", True


def _result(value: object) -> Answer:
    return (value, False) if isinstance(value, str) else (_text(value), False)


async def invoke(tool: Any, command: Input) -> Answer:
    """One call; a sync tool runs on the calling thread (the event loop is private to the case)."""
    try:
        value = tool.call(dict(command))
        if inspect.isawaitable(value):
            value = await value
    except Exception as exc:
        return _error(exc)
    return _result(value)


async def race(tool: Any, commands: list[Input]) -> list[Answer]:
    """The calls started together: threads behind a barrier for a sync tool, tasks behind an event for an async one."""
    if is_async(tool):
        start = asyncio.Event()

        async def one(command: Input) -> Answer:
            await start.wait()
            return await invoke(tool, command)

        tasks = [asyncio.ensure_future(one(command)) for command in commands]
        await asyncio.sleep(0)  # every task is waiting at the event
        start.set()
        return list(await asyncio.gather(*tasks))
    barrier = threading.Barrier(len(commands))

    def blocking(command: Input) -> Answer:
        barrier.wait()
        return asyncio.run(invoke(tool, command))

    loop = asyncio.get_running_loop()
    with ThreadPoolExecutor(max_workers=len(commands)) as pool:  # one thread per call: the barrier needs them all
        return list(await asyncio.gather(*(loop.run_in_executor(pool, blocking, command) for command in commands)))


async def make(factory: Callable[[], Any]) -> Any:
    tool = factory()
    if inspect.isawaitable(tool):
        tool = await tool
    return tool


async def close(tool: Any) -> None:
    """`close()` (or `aclose()`) if the tool has one: s3memory's tools own worker threads."""
    for name in ("aclose", "close"):
        method: Callable[[], object] | None = getattr(tool, name, None)
        if callable(method):
            done = method()
            if inspect.isawaitable(done):
                await done
            return
