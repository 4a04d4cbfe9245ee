"""A memory in a dict that follows the contract in every case of the kit: the base the mutants break.

Written from docs/contract.md, independently of s3memory's code, so that the kit is shown to be
satisfiable by a second implementation and each mutant differs from it by one rule.
"""

from __future__ import annotations

import re
import threading
from typing import Any

ROOT = "/memories"
PERCENT = re.compile(r"%[0-9a-fA-F]{2}")


class Refused(Exception):
    """An error result, as the SDK's ToolError carries it: the text in `content`."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.content = text


def split_lines(text: str) -> list[str]:
    pieces = text.split("\n")
    return pieces[:-1] if pieces[-1] == "" else pieces


class DictMemory:
    width = 6  # line numbers
    first_line = 1

    def __init__(self) -> None:
        self.files: dict[str, str] = {}
        self.lock = threading.Lock()

    def call(self, input: dict[str, Any]) -> str:
        args = {k: v for k, v in input.items() if k != "command"}
        with self.lock:
            answer: str = getattr(self, "do_" + input["command"])(**args)
            return answer

    # -- paths --
    def path(self, raw: str) -> str:
        shown = repr(raw)[1:-1]
        reason = self.problem(raw)
        if reason:
            raise Refused(f"Error: Invalid path {shown}: {reason}")
        return raw[:-1] if raw.endswith("/") and raw != "/" else raw

    def problem(self, raw: str) -> str:
        if any(ord(c) < 32 or ord(c) == 127 for c in raw):
            return "it contains a control character"
        if "\\" in raw:
            return "it contains a backslash"
        if PERCENT.search(raw):
            return "it contains a percent-encoded sequence"
        if not self.inside(raw):
            return "it must start with /memories"
        trimmed = raw[:-1] if raw.endswith("/") else raw
        for segment in trimmed.split("/")[2:]:
            if segment == "":
                return "it contains an empty segment"
            if segment in (".", ".."):
                return f"it contains '{segment}'"
            if len(segment.encode()) > 255:
                return "a segment is longer than 255 bytes"
        return ""

    def inside(self, raw: str) -> bool:
        return raw in (ROOT, ROOT + "/") or raw.startswith(ROOT + "/")

    def is_dir(self, path: str) -> bool:
        return path == ROOT or any(f.startswith(path + "/") for f in self.files)

    def file_ancestor(self, path: str) -> str | None:
        parts = path.split("/")
        for n in range(3, len(parts)):
            if "/".join(parts[:n]) in self.files:
                return "/".join(parts[:n])
        return None

    # -- view --
    def size(self, n: int) -> str:
        if n < 1024:
            return f"{n}B"
        value = float(n)
        for unit in "KMG":
            value /= 1024
            if round(value, 1) < 1024 or unit == "G":
                return f"{value:.1f}{unit}"
        raise AssertionError

    def dir_line(self, shown: str) -> str:
        return f"4.0K\t{shown}/"

    def do_view(self, path: str, view_range: list[int] | None = None) -> str:
        path = self.path(path)
        if path in self.files:
            return self.show(path, self.files[path], view_range)
        if not self.is_dir(path):
            raise Refused(f"The path {path} does not exist. Please provide a valid path.")
        tree: dict[str, Any] = {}
        for name, text in self.files.items():
            if name.startswith(path + "/"):
                parts = name[len(path) + 1 :].split("/")
                if any(p.startswith(".") or p == "node_modules" for p in parts):
                    continue
                node = tree
                for part in parts[:-1]:
                    node = node.setdefault(part, {})
                node[parts[-1]] = len(text.encode())
        lines = [
            f"Here're the files and directories up to 2 levels deep in {path}, "
            "excluding hidden items and node_modules:",
            f"4.0K\t{path}",
        ]
        self.walk(tree, path, 1, lines)
        return "\n".join(lines)

    def walk(self, node: dict[str, Any], at: str, depth: int, lines: list[str]) -> None:
        for name in sorted(node):
            child = node[name]
            if isinstance(child, dict):
                lines.append(self.dir_line(f"{at}/{name}"))
                if depth < 2:
                    self.walk(child, f"{at}/{name}", depth + 1, lines)
            else:
                lines.append(f"{self.size(child)}\t{at}/{name}")

    def numbered(self, lines: list[str], first: int) -> list[str]:
        return [f"{n - 1 + self.first_line:>{self.width}}\t{line}" for n, line in enumerate(lines, first)]

    def show(self, path: str, text: str, view_range: list[int] | None) -> str:
        lines = split_lines(text)
        n = len(lines)
        if n > 999_999:
            raise Refused(f"File {path} exceeds maximum line limit of 999,999 lines.")
        first, last = 1, n
        if view_range is not None:
            start, end = view_range
            if start < 1 or start > n or (end != -1 and end < start):
                raise Refused(
                    f"Error: Invalid `view_range` parameter: [{start}, {end}]. "
                    f"It should be within the range of lines of the file: [1, {n}]"
                )
            first, last = start, n if end == -1 else min(end, n)
        header = f"Here's the content of {path} with line numbers:"
        return "\n".join([header, *self.numbered(lines[first - 1 : last], first)])

    # -- create, str_replace, insert --
    def do_create(self, path: str, file_text: str) -> str:
        path = self.path(path)
        if path in self.files or self.is_dir(path):
            raise Refused(f"Error: File {path} already exists")
        parent = self.file_ancestor(path)
        if parent:
            raise Refused(f"Error: Cannot create {path}: {parent} is a file")
        self.files[path] = file_text
        return f"File created successfully at: {path}"

    def do_str_replace(self, path: str, old_str: str, new_str: Any = None) -> str:
        path = self.path(path)
        if path not in self.files:
            raise Refused(f"Error: The path {path} does not exist. Please provide a valid path.")
        if not isinstance(new_str, str):
            raise Refused("Error: Invalid `new_str` parameter: it must be a string")
        text = self.files[path]
        starts, pos = [], text.find(old_str) if old_str else -1
        while pos != -1:
            starts.append(pos)
            pos = text.find(old_str, pos + 1)
        if not starts:
            raise Refused(f"No replacement was performed, old_str `{old_str}` did not appear verbatim in {path}.")
        if len(starts) > 1:
            numbers = ", ".join(str(text.count("\n", 0, s) + 1) for s in starts[:20])
            if len(starts) > 20:
                numbers += f", and {len(starts) - 20:,} more"
            raise Refused(
                f"No replacement was performed. Multiple occurrences of old_str `{old_str}` in lines: {numbers}. "
                "Please ensure it is unique"
            )
        result = text[: starts[0]] + new_str + text[starts[0] + len(old_str) :]
        self.files[path] = result
        first = text.count("\n", 0, starts[0]) + 1
        last = max(first, first + new_str.count("\n") - (1 if new_str.endswith("\n") else 0))
        lines = split_lines(result)
        lo, hi = max(1, first - 4), min(len(lines), last + 4)
        head = "The memory file has been edited. Here is the snippet showing the change (with line numbers):"
        return "\n".join([head, *self.numbered(lines[lo - 1 : hi], lo)])

    def do_insert(self, path: str, insert_line: int, insert_text: str) -> str:
        path = self.path(path)
        if path not in self.files:
            raise Refused(f"Error: The path {path} does not exist")
        text = self.files[path]
        parts = text.split("\n")
        ends = [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])
        if insert_line < 0 or insert_line > len(ends):
            raise Refused(
                f"Error: Invalid `insert_line` parameter: {insert_line}. "
                f"It should be within the range of lines of the file: [0, {len(ends)}]"
            )
        if insert_line == len(ends) and ends and not ends[-1].endswith("\n"):
            ends[-1] += "\n"
        ends.insert(insert_line, insert_text if insert_text.endswith("\n") else insert_text + "\n")
        self.files[path] = "".join(ends)
        return f"The file {path} has been edited."

    # -- delete, rename --
    def do_delete(self, path: str) -> str:
        path = self.path(path)
        if path == ROOT:
            raise Refused("Error: Cannot delete the /memories directory itself")
        doomed = [f for f in self.files if f == path or f.startswith(path + "/")]
        if not doomed:
            raise Refused(f"Error: The path {path} does not exist")
        for name in doomed:
            del self.files[name]
        return f"Successfully deleted {path}"

    def do_rename(self, old_path: str, new_path: str) -> str:
        old, new = self.path(old_path), self.path(new_path)
        if old == ROOT:
            raise Refused("Error: Cannot rename the /memories directory itself")
        if old not in self.files and not self.is_dir(old):
            raise Refused(f"Error: The path {old} does not exist")
        if old not in self.files and new.startswith(old + "/"):
            raise Refused(f"Error: Cannot move {old} into itself")
        if new in self.files or self.is_dir(new):
            raise Refused(f"Error: The destination {new} already exists")
        parent = self.file_ancestor(new)
        if parent:
            raise Refused(f"Error: Cannot create {new}: {parent} is a file")
        self.move(old, new)
        return f"Successfully renamed {old} to {new}"

    def move(self, old: str, new: str) -> None:
        for name in [f for f in self.files if f == old or f.startswith(old + "/")]:
            self.files[new + name[len(old) :]] = self.files.pop(name)
