"""The rules the cases check, each in one sentence: a failing case names its rule and says it in words.

The statements follow the memory tool's documentation (its command table and its `view` example) and,
where the documentation is silent, docs/contract.md's decisions; docs/conformance.md lists which is which.
"""

from __future__ import annotations

RULES: dict[str, str] = {
    # paths and traversal
    "paths.prefix": "every path is /memories or starts with /memories/; a sibling such as /memories_backup is "
    "refused with `Error: Invalid path {path}: it must start with /memories`",
    "paths.traversal": "'.' and '..' segments are refused (`Error: Invalid path {path}: it contains '..'`), "
    "never resolved",
    "paths.empty-segment": "an empty segment (`//`) is refused with `Error: Invalid path {path}: ...`",
    "paths.backslash": "a backslash is refused with `Error: Invalid path {path}: ...`",
    "paths.percent": "a % followed by two hex digits is refused with `Error: Invalid path {path}: ...`",
    "paths.control": "control characters are refused with `Error: Invalid path {path}: ...`, the path shown escaped",
    "paths.segment-length": "a segment longer than 255 bytes (UTF-8) is refused; one of 255 bytes is accepted",
    "paths.both-first": "both paths of a rename are checked before anything else",
    "paths.trailing-slash": "one trailing / is dropped: /memories/notes/ is answered as /memories/notes",
    # the root
    "root.exists": "/memories always exists, even in a memory with nothing in it",
    "root.delete": "`delete /memories` answers `Error: Cannot delete the /memories directory itself`",
    "root.rename": "`rename` of /memories answers `Error: Cannot rename the /memories directory itself`",
    "root.not-a-file": "/memories is a directory: create answers `already exists`, str_replace and insert "
    "`does not exist`",
    # listings
    "view.dir.header": "a listing starts `Here're the files and directories up to 2 levels deep in {path}, "
    "excluding hidden items and node_modules:`",
    "view.dir.size-format": "sizes are {n}B below 1,024 bytes, else one decimal place with K, M or G in powers of "
    "1,024 (1.5K, 2.0K, 1.0M)",
    "view.dir.dir-size": "a directory's size is always 4.0K",
    "view.dir.trailing-slash": "directory entries end with /; the listed directory's own line does not",
    "view.dir.depth": "a listing shows entries up to 2 levels below the directory",
    "view.dir.order": "a listing is depth-first, each level sorted by name in Python string order, each directory "
    "followed at once by its children",
    "view.dir.hidden": "hidden names (starting with .) and node_modules are left out, with everything below them",
    "view.dir.prefix-sibling": "a directory holds only what is below its name and a /: d2 and d.md are not in d",
    "view.missing": "a missing path answers `The path {path} does not exist. Please provide a valid path.`",
    # files and ranges
    "view.file.format": "a file is `Here's the content of {path} with line numbers:`, then each line as its number "
    "right-aligned to 6 characters, a tab and the line",
    "view.file.lines": "lines are the text split on \\n, without the empty piece after a final newline; an empty "
    "file is the header alone",
    "view.range": "view_range [start, end] is 1-indexed and inclusive; -1, or an end past the last line, means "
    "the last line",
    "view.range.invalid": "a view_range outside the file answers `Error: Invalid `view_range` parameter: "
    "[{start}, {end}]. It should be within the range of lines of the file: [1, {n_lines}]`",
    "view.max-lines": "a file of more than 999,999 lines answers `File {path} exceeds maximum line limit of "
    "999,999 lines.`; one of 999,999 lines is shown",
    # create
    "create.success": "create answers `File created successfully at: {path}` and stores the text exactly",
    "create.parents": "create makes the missing parent directories",
    "create.exists": "create over a file or a directory answers `Error: File {path} already exists` and changes "
    "nothing",
    "create.parent-file": "create below a file answers `Error: Cannot create {path}: {parent} is a file`",
    "create.prefix-sibling": "a name that extends another (a.md.bak, d.md beside d/) is a different entry",
    # str_replace
    "replace.snippet": "str_replace answers `The memory file has been edited. Here is the snippet showing the "
    "change (with line numbers):` and the changed lines with 4 lines of context before and after, as view shows them",
    "replace.exact": "str_replace replaces the one occurrence exactly, across lines too, and nothing else",
    "replace.missing": "str_replace of a missing path or a directory answers `Error: The path {path} does not "
    "exist. Please provide a valid path.`",
    "replace.not-found": "an old_str that does not occur (or is empty) answers ``No replacement was performed, "
    "old_str `{old_str}` did not appear verbatim in {path}.`` and changes nothing",
    "replace.multiple": "several occurrences answer ``No replacement was performed. Multiple occurrences of old_str "
    "`{old_str}` in lines: {lines}. Please ensure it is unique``, overlapping ones counted, the first 20 listed",
    "replace.arguments": "a str_replace without new_str is an error and writes nothing",
    # insert
    "insert.success": "insert answers `The file {path} has been edited.`",
    "insert.position": "insert_line 0 inserts before the first line, n after line n, counting lines as view does",
    "insert.whole-lines": "inserted text becomes whole lines: a \\n is added only if it has none at its end; a "
    "file without a final \\n gets one only where text is appended after its last line",
    "insert.range": "an insert_line outside [0, n_lines] answers `Error: Invalid `insert_line` parameter: {n}. "
    "It should be within the range of lines of the file: [0, {n_lines}]`",
    "insert.missing": "insert into a missing path or a directory answers `Error: The path {path} does not exist`",
    # delete
    "delete.file": "delete answers `Successfully deleted {path}` and the file is gone",
    "delete.dir": "delete of a directory removes everything below it, hidden files too, and nothing beside it",
    "delete.missing": "delete of a missing path answers `Error: The path {path} does not exist`",
    # rename
    "rename.file": "rename answers `Successfully renamed {old_path} to {new_path}`; the content moves unchanged",
    "rename.dir": "rename moves a whole directory, hidden files too, and nothing beside it",
    "rename.parents": "rename makes the missing parents of the destination",
    "rename.missing": "rename of a missing path answers `Error: The path {old_path} does not exist`",
    "rename.exists": "rename onto a file or a directory answers `Error: The destination {new_path} already exists`",
    "rename.into-itself": "rename of a directory below itself answers `Error: Cannot move {old_path} into itself`; "
    "a sibling whose name extends it (d → d2) is not below it",
    "rename.parent-file": "rename below a file answers `Error: Cannot create {new_path}: {parent} is a file`",
    "rename.atomic": "a refused rename changes nothing: no file of the source is moved",
    # unicode and line endings
    "text.exact": "text is stored and shown exactly: non-ASCII, \\r\\n, lone \\r, tabs, U+2028 and trailing spaces",
    "text.size": "a file's size is its UTF-8 byte count",
    "text.names": "non-ASCII names are stored, listed and sorted (by code point) like any other",
    # concurrency (for backends that claim it)
    "race.create": "of concurrent creates of one path exactly one wins; the others answer `already exists`",
    "race.edit": "concurrent edits of one file never lose an update",
    "race.rename": "of concurrent renames of one file exactly one succeeds and one copy remains",
    "race.delete": "concurrent deletes of one file remove it; at least one answers `Successfully deleted`, the others "
    "the same or `does not exist` (a delete is idempotent: both answers are true)",
}
