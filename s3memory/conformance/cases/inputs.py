"""The six commands' inputs, as Claude sends them, and the answers the cases share (literal text)."""

from __future__ import annotations

from s3memory.conformance.model import Input

# `view /memories` of a memory with nothing in it; listings of /memories begin with these two lines.
ROOT = (
    "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n"
    "4.0K\t/memories"
)


def view(path: str, view_range: list[int] | None = None) -> Input:
    command: Input = {"command": "view", "path": path}
    if view_range is not None:
        command["view_range"] = view_range
    return command


def create(path: str, file_text: str) -> Input:
    return {"command": "create", "path": path, "file_text": file_text}


def replace(path: str, old_str: str, new_str: str) -> Input:
    return {"command": "str_replace", "path": path, "old_str": old_str, "new_str": new_str}


def insert(path: str, insert_line: int, insert_text: str) -> Input:
    return {"command": "insert", "path": path, "insert_line": insert_line, "insert_text": insert_text}


def delete(path: str) -> Input:
    return {"command": "delete", "path": path}


def rename(old_path: str, new_path: str) -> Input:
    return {"command": "rename", "old_path": old_path, "new_path": new_path}
