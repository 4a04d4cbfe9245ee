"""Every string the model sees in the commands' answers, and `format_size`. Pure (the operational
errors are in `operational`).

The texts follow docs/contract.md to the byte; tests assert them literally.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

LINE_NUMBER_WIDTH = 6
MAX_LINES = 999_999
DIR_SIZE = "4.0K"
# The memory tool's commands, in the order the dispatch errors name them.
COMMANDS = ("view", "create", "str_replace", "insert", "delete", "rename")


def format_size(n: int) -> str:
    """`512B`, `1.5K`, `4.0K`, `1.2M`: powers of 1,024, one decimal above 1 KiB."""
    if n < 1024:
        return f"{n}B"
    value = float(n)
    for unit in ("K", "M", "G"):
        value /= 1024.0
        if round(value, 1) < 1024.0 or unit == "G":  # 1,048,575 bytes is 1.0M, not 1024.0K
            return f"{value:.1f}{unit}"
    raise AssertionError("unreachable")


def numbered(lines: Sequence[str], first: int) -> list[str]:
    """View-format lines: number right-aligned to 6, a tab, the line."""
    return [f"{first + i:>{LINE_NUMBER_WIDTH}}\t{line}" for i, line in enumerate(lines)]


def numbered_within(lines: Sequence[str], first: int, max_chars: int) -> list[str]:
    """`numbered(lines, first)`, but only the leading lines that fit in `max_chars` when joined
    with newlines: a long file is formatted only as far as it is shown."""
    out: list[str] = []
    total = 0
    for i, line in enumerate(lines):
        shown = f"{first + i:>{LINE_NUMBER_WIDTH}}\t{line}"
        total += len(shown) + (1 if i else 0)
        if total > max_chars:
            break
        out.append(shown)
    return out


def fit_lines(lines: Sequence[str], max_chars: int) -> int:
    """How many leading lines fit when joined with newlines into at most `max_chars` characters."""
    total = 0
    for i, line in enumerate(lines):
        total += len(line) + (1 if i else 0)
        if total > max_chars:
            return i
    return len(lines)


# --- arguments as sent ----------------------------------------------------------------

TOO_LARGE_TO_SHOW = "<a value too large to show>"


def shown(value: object, *, as_repr: bool = False) -> str:
    """An argument the model sent, as an error message shows it: `str(value)` (`repr` if
    `as_repr`), or `TOO_LARGE_TO_SHOW` for a value Python refuses to format: an integer of more
    digits than its int-to-str limit (4,300 by default; `insert_line: 10**5000`), or a list nested
    deeper than its recursion limit. Never raises."""
    try:
        return repr(value) if as_repr else str(value)
    except (ValueError, RecursionError):
        return TOO_LARGE_TO_SHOW


# --- dispatch --------------------------------------------------------------------------


def missing_command() -> str:
    return f"Error: Missing `command` parameter; use one of: {', '.join(COMMANDS)}"


def unknown_command(command: object) -> str:
    """`command` is shown as sent if it is a string, else by its type's name (never its value)."""
    shown = command if isinstance(command, str) else type(command).__name__
    return f"Error: Unknown memory command {shown!r}; use one of: {', '.join(COMMANDS)}"


def command_problem(arguments: object) -> str | None:
    """The dispatch error for a tool input whose `command` is missing or unknown; None if it names one."""
    command = arguments.get("command") if isinstance(arguments, dict) else None
    if command is None:
        return missing_command()
    return None if command in COMMANDS else unknown_command(command)


# --- view ------------------------------------------------------------------------------


def dir_listing(display: str, entries: Iterable[tuple[str, str]]) -> str:
    """`entries` are (size, relative name) below `display`, already ordered."""
    lines = [
        f"Here're the files and directories up to 2 levels deep in {display}, excluding hidden items and node_modules:",
        f"{DIR_SIZE}\t{display}",
    ]
    lines.extend(f"{size}\t{display}/{name}" for size, name in entries)
    return "\n".join(lines)


def file_header(display: str) -> str:
    return f"Here's the content of {display} with line numbers:"


def file_truncated(display: str, next_line: int, n_lines: int, max_chars: int) -> str:
    """Last line of a file view cut at the character limit."""
    return (
        f"[Output truncated at {max_chars:,} characters. Use view_range [{next_line}, {n_lines}] "
        f"to read the rest of {display}.]"
    )


def listing_truncated(display: str, max_chars: int) -> str:
    """Last line of a directory listing cut at the character limit."""
    return f"[Output truncated at {max_chars:,} characters. View a subdirectory of {display} to see the rest.]"


def view_range_invalid(start: object, end: object, n_lines: int) -> str:
    return (
        f"Error: Invalid `view_range` parameter: [{shown(start)}, {shown(end)}]. "
        f"It should be within the range of lines of the file: [1, {n_lines}]"
    )


def view_range_malformed(value: object) -> str:
    return (
        f"Error: Invalid `view_range` parameter: {shown(value, as_repr=True)}. "
        "It should be a list of two integers: [start, end]"
    )


def too_many_lines(display: str) -> str:
    return f"File {display} exceeds maximum line limit of 999,999 lines."


def does_not_exist_view(display: str) -> str:
    return f"The path {display} does not exist. Please provide a valid path."


# --- create / edit ---------------------------------------------------------------------


def created(display: str) -> str:
    return f"File created successfully at: {display}"


def already_exists(display: str) -> str:
    return f"Error: File {display} already exists"


def parent_is_file(display: str, parent: str) -> str:
    return f"Error: Cannot create {display}: {parent} is a file"


def does_not_exist_long(display: str) -> str:
    return f"Error: The path {display} does not exist. Please provide a valid path."


def does_not_exist(display: str) -> str:
    return f"Error: The path {display} does not exist"


def edited_snippet(snippet_lines: Sequence[str], first: int) -> str:
    head = "The memory file has been edited. Here is the snippet showing the change (with line numbers):"
    return "\n".join([head, *numbered(snippet_lines, first)])


def not_found_old_str(old_str: str, display: str) -> str:
    return f"No replacement was performed, old_str `{old_str}` did not appear verbatim in {display}."


def multiple_old_str(old_str: str, line_numbers: Sequence[int], total: int | None = None) -> str:
    """`line_numbers`: the first occurrences' lines (at most 20 are shown); `total`: all of them."""
    total = len(line_numbers) if total is None else total
    shown = list(line_numbers[:20])
    lines = ", ".join(str(n) for n in shown)
    if total > len(shown):
        lines += f", and {total - len(shown):,} more"
    return (
        f"No replacement was performed. Multiple occurrences of old_str `{old_str}` in lines: {lines}. "
        "Please ensure it is unique"
    )


def inserted(display: str) -> str:
    return f"The file {display} has been edited."


def insert_line_invalid(insert_line: object, n_lines: int) -> str:
    return (
        f"Error: Invalid `insert_line` parameter: {shown(insert_line)}. "
        f"It should be within the range of lines of the file: [0, {n_lines}]"
    )


def too_large(display: str, size: int, limit: int) -> str:
    return (
        f"Error: Cannot write {display}: the file would be {size:,} bytes, "
        f"over the limit of {limit:,} bytes. Nothing was changed."
    )


def quota_files(display: str, used: int, limit: int) -> str:
    return (
        f"Error: Cannot create {display}: this memory already holds {used:,} files, "
        f"the limit is {limit:,}. Delete or merge files first. Nothing was changed."
    )


def quota_bytes(display: str, total: int, limit: int) -> str:
    return (
        f"Error: Cannot write {display}: memory would hold {total:,} bytes, over the limit of "
        f"{limit:,} bytes for this agent. Delete or shorten files first. Nothing was changed."
    )


def bad_argument(name: str, expected: str) -> str:
    return f"Error: Invalid `{name}` parameter: it must be {expected}"


# --- delete / rename -------------------------------------------------------------------


def deleted(display: str) -> str:
    return f"Successfully deleted {display}"


def cannot_delete_root() -> str:
    return "Error: Cannot delete the /memories directory itself"


def renamed(old: str, new: str) -> str:
    return f"Successfully renamed {old} to {new}"


def destination_exists(display: str) -> str:
    return f"Error: The destination {display} already exists"


def cannot_rename_root() -> str:
    return "Error: Cannot rename the /memories directory itself"


def into_itself(display: str) -> str:
    return f"Error: Cannot move {display} into itself"


# -- mounted stores (see `core.mounts`) --
def read_only_mount(display: str, mount: str) -> str:
    return (
        f"Error: Cannot change {display}: {mount} is a read-only shared store. "
        "Nothing was changed; retrying will not help."
    )


def cannot_delete_mount(mount: str) -> str:
    return f"Error: Cannot delete the mounted store {mount} itself"


def cannot_rename_mount(mount: str) -> str:
    return f"Error: Cannot rename the mounted store {mount} itself"


def rename_across_stores(old: str, new: str) -> str:
    return (
        f"Error: Cannot rename {old} to {new}: a rename cannot move files between this memory and a shared "
        "store, or between two stores. Nothing was changed; create the file at the new path and delete the old one "
        "instead."
    )
