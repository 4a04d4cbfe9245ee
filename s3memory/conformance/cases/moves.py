"""`delete` and `rename` of files and directories."""
# A table of literal answers: each expected string is kept whole on its line.
# ruff: noqa: E501

from __future__ import annotations

from s3memory.conformance.model import DECISION, Case, gone, seen

from .inputs import ROOT, create, delete, rename

A = create("/memories/a.md", "alpha\n")
B = create("/memories/b.md", "beta\n")
A_SEEN = seen("/memories/a.md", "Here's the content of /memories/a.md with line numbers:\n     1\talpha")
B_SEEN = seen("/memories/b.md", "Here's the content of /memories/b.md with line numbers:\n     1\tbeta")
TREE = (create("/memories/d/a.md", "a"), create("/memories/d/e/b.md", "b"), create("/memories/d/.h", "h"))
SDK_HEAD = "header `..., excluding hidden items:` and sizes from the file system"


def content(path: str, text: str) -> str:
    return f"Here's the content of {path} with line numbers:\n     1\t{text}"


CASES = (
    # -- delete --
    Case("delete.file", "delete", "moves", "delete.file", "the success answer, then the file is gone",
         delete("/memories/a.md"), "Successfully deleted /memories/a.md", given=(A, B),
         after=(gone("/memories/a.md"), B_SEEN)),
    Case("delete.dir", "delete", "moves", "delete.dir", "everything below, hidden files included",
         delete("/memories/d"), "Successfully deleted /memories/d", given=TREE,
         after=(gone("/memories/d"), gone("/memories/d/e/b.md"), gone("/memories/d/.h"), seen("/memories", ROOT)),
         sdk=SDK_HEAD),
    Case("delete.subdir", "delete", "moves", "delete.dir", "a directory inside another",
         delete("/memories/d/e"), "Successfully deleted /memories/d/e", given=TREE,
         after=(gone("/memories/d/e/b.md"), seen("/memories/d/a.md", content("/memories/d/a.md", "a")))),
    Case("delete.dir-siblings", "delete", "moves", "delete.dir", "d2/ and d.md are not in d",
         delete("/memories/d"), "Successfully deleted /memories/d",
         given=(create("/memories/d/a", "a"), create("/memories/d2/b", "b"), create("/memories/d.md", "c")),
         after=(seen("/memories", ROOT + "\n1B\t/memories/d.md\n4.0K\t/memories/d2/\n1B\t/memories/d2/b"),),
         sdk=SDK_HEAD),
    Case("delete.file-sibling", "delete", "moves", "delete.file", "a.md.bak is not a.md",
         delete("/memories/a.md"), "Successfully deleted /memories/a.md",
         given=(A, create("/memories/a.md.bak", "b")), after=(seen("/memories", ROOT + "\n1B\t/memories/a.md.bak"),),
         sdk=SDK_HEAD),
    Case("delete.missing", "delete", "moves", "delete.missing", "nothing at the path", delete("/memories/nope.md"),
         "Error: The path /memories/nope.md does not exist", True, given=(A,), after=(A_SEEN,),
         sdk="`The path /memories/nope.md does not exist` (no `Error: `)"),
    Case("delete.below-file", "delete", "moves", "delete.missing", "a file has no children",
         delete("/memories/a.md/x"), "Error: The path /memories/a.md/x does not exist", True, given=(A,),
         after=(A_SEEN,), sdk="`The path /memories/a.md/x does not exist` (no `Error: `)"),
    Case("delete.prefix", "delete", "moves", "delete.missing", "a prefix of a name is not a directory",
         delete("/memories/a"), "Error: The path /memories/a does not exist", True, given=(A,), after=(A_SEEN,),
         sdk="`The path /memories/a does not exist` (no `Error: `)"),
    Case("delete.hidden", "delete", "moves", "delete.file", "a hidden file can be deleted",
         delete("/memories/.h"), "Successfully deleted /memories/.h", given=(create("/memories/.h", "h"),),
         after=(gone("/memories/.h"),)),
    # -- rename: files --
    Case("rename.file", "rename", "moves", "rename.file", "the content moves unchanged",
         rename("/memories/a.md", "/memories/c.md"), "Successfully renamed /memories/a.md to /memories/c.md",
         given=(A,), after=(gone("/memories/a.md"), seen("/memories/c.md", content("/memories/c.md", "alpha")))),
    Case("rename.file-size", "rename", "moves", "rename.file", "no byte added or lost (sizes prove it)",
         rename("/memories/a.md", "/memories/c.md"), "Successfully renamed /memories/a.md to /memories/c.md",
         given=(create("/memories/a.md", "no final newline"),), after=(seen("/memories", ROOT + "\n16B\t/memories/c.md"),),
         sdk=SDK_HEAD),
    Case("rename.parents", "rename", "moves", "rename.parents", "missing parents are made",
         rename("/memories/a.md", "/memories/x/y/a.md"), "Successfully renamed /memories/a.md to /memories/x/y/a.md",
         given=(A,), after=(seen("/memories/x/y/a.md", content("/memories/x/y/a.md", "alpha")), gone("/memories/a.md"))),
    Case("rename.into-dir", "rename", "moves", "rename.file", "into a directory that exists",
         rename("/memories/a.md", "/memories/d/a.md"), "Successfully renamed /memories/a.md to /memories/d/a.md",
         given=(A, create("/memories/d/b", "b")),
         after=(seen("/memories", ROOT + "\n4.0K\t/memories/d/\n6B\t/memories/d/a.md\n1B\t/memories/d/b"),),
         sdk=SDK_HEAD),
    Case("rename.missing", "rename", "moves", "rename.missing", "nothing at old_path",
         rename("/memories/nope.md", "/memories/c.md"), "Error: The path /memories/nope.md does not exist", True,
         after=(gone("/memories/c.md"),), sdk="`The path /memories/nope.md does not exist` (no `Error: `)"),
    Case("rename.onto-file", "rename", "moves", "rename.exists", "a file is never overwritten by rename",
         rename("/memories/a.md", "/memories/b.md"), "Error: The destination /memories/b.md already exists", True,
         given=(A, B), after=(A_SEEN, B_SEEN), sdk="`The destination /memories/b.md already exists` (no `Error: `)"),
    Case("rename.onto-dir", "rename", "moves", "rename.exists", "nor is a directory",
         rename("/memories/a.md", "/memories/d"), "Error: The destination /memories/d already exists", True,
         given=(A, create("/memories/d/x", "x")), after=(A_SEEN,),
         sdk="`The destination /memories/d already exists` (no `Error: `)"),
    Case("rename.onto-itself", "rename", "moves", "rename.exists", "a file renamed to its own path",
         rename("/memories/a.md", "/memories/a.md"), "Error: The destination /memories/a.md already exists", True,
         given=(A,), after=(A_SEEN,), sdk="`The destination /memories/a.md already exists` (no `Error: `)"),
    Case("rename.below-file", "rename", "moves", "rename.parent-file", "a file cannot hold files",
         rename("/memories/b.md", "/memories/a.md/b.md"),
         "Error: Cannot create /memories/a.md/b.md: /memories/a.md is a file", True, given=(A, B),
         after=(A_SEEN, B_SEEN), source=DECISION, sdk="raises NotADirectoryError, not a ToolError"),
    Case("rename.below-file-deep", "rename", "moves", "rename.parent-file", "the ancestor that is a file is named",
         rename("/memories/b.md", "/memories/a.md/x/b.md"),
         "Error: Cannot create /memories/a.md/x/b.md: /memories/a.md is a file", True, given=(A, B),
         after=(A_SEEN, B_SEEN), source=DECISION, sdk="raises NotADirectoryError, not a ToolError"),
    # -- rename: directories --
    Case("rename.dir", "rename", "moves", "rename.dir", "a whole directory moves",
         rename("/memories/d", "/memories/n"), "Successfully renamed /memories/d to /memories/n", given=TREE,
         after=(gone("/memories/d"), seen("/memories", ROOT + "\n4.0K\t/memories/n/\n1B\t/memories/n/a.md"
                                          "\n4.0K\t/memories/n/e/"),
                seen("/memories/n/.h", content("/memories/n/.h", "h"))), sdk=SDK_HEAD),
    Case("rename.dir-deep", "rename", "moves", "rename.dir", "files deeper than the listing move too",
         rename("/memories/d", "/memories/n"), "Successfully renamed /memories/d to /memories/n",
         given=(create("/memories/d/1/2/3/4.md", "4"),),
         after=(seen("/memories/n/1/2/3/4.md", content("/memories/n/1/2/3/4.md", "4")),)),
    Case("rename.dir-siblings", "rename", "moves", "rename.dir", "d2/ and d.md stay where they are",
         rename("/memories/d", "/memories/x"), "Successfully renamed /memories/d to /memories/x",
         given=(create("/memories/d/a", "a"), create("/memories/d2/b", "b"), create("/memories/d.md", "c")),
         after=(seen("/memories", ROOT + "\n1B\t/memories/d.md\n4.0K\t/memories/d2/\n1B\t/memories/d2/b"
                     "\n4.0K\t/memories/x/\n1B\t/memories/x/a"),), sdk=SDK_HEAD),
    Case("rename.dir-extended-name", "rename", "moves", "rename.into-itself", "d → d2 is not into itself",
         rename("/memories/d", "/memories/d2"), "Successfully renamed /memories/d to /memories/d2",
         given=(create("/memories/d/a", "a"),), after=(seen("/memories/d2/a", content("/memories/d2/a", "a")),)),
    Case("rename.dir-into-sibling", "rename", "moves", "rename.dir", "into another directory",
         rename("/memories/d", "/memories/e/d"), "Successfully renamed /memories/d to /memories/e/d",
         given=(create("/memories/d/a", "a"), create("/memories/e/b", "b")),
         after=(seen("/memories", ROOT + "\n4.0K\t/memories/e/\n1B\t/memories/e/b\n4.0K\t/memories/e/d/"),),
         sdk=SDK_HEAD),
    Case("rename.dir-trailing", "rename", "moves", "paths.trailing-slash", "final slashes are dropped",
         rename("/memories/d/", "/memories/n/"), "Successfully renamed /memories/d to /memories/n",
         given=(create("/memories/d/a", "a"),), after=(gone("/memories/d/a"),), source=DECISION,
         sdk="`Successfully renamed /memories/d/ to /memories/n/`"),
    Case("rename.into-itself", "rename", "moves", "rename.into-itself", "a directory cannot go below itself",
         rename("/memories/d", "/memories/d/sub"), "Error: Cannot move /memories/d into itself", True,
         given=(create("/memories/d/a", "a"),), after=(seen("/memories/d/a", content("/memories/d/a", "a")),),
         source=DECISION, sdk="raises OSError (Invalid argument), not a ToolError"),
    Case("rename.into-itself-deep", "rename", "moves", "rename.into-itself", "nor deeper below itself",
         rename("/memories/d", "/memories/d/x/y"), "Error: Cannot move /memories/d into itself", True,
         given=(create("/memories/d/a", "a"),), after=(gone("/memories/d/x/y/a"),), source=DECISION,
         sdk="raises OSError (Invalid argument), not a ToolError"),
    Case("rename.dir-onto-dir", "rename", "moves", "rename.atomic",
         "onto a directory: refused before any file moves", rename("/memories/a", "/memories/b"),
         "Error: The destination /memories/b already exists", True,
         given=(create("/memories/a/1", "1"), create("/memories/a/2", "2"), create("/memories/b/2", "x")),
         after=(seen("/memories", ROOT + "\n4.0K\t/memories/a/\n1B\t/memories/a/1\n1B\t/memories/a/2"
                     "\n4.0K\t/memories/b/\n1B\t/memories/b/2"),),
         sdk="`The destination /memories/b already exists` (no `Error: `)"),
    Case("rename.dir-below-file", "rename", "moves", "rename.atomic", "below a file: refused before any file moves",
         rename("/memories/d", "/memories/f/d"), "Error: Cannot create /memories/f/d: /memories/f is a file", True,
         given=(create("/memories/d/1", "1"), create("/memories/d/2", "2"), create("/memories/f", "f")),
         after=(seen("/memories", ROOT + "\n4.0K\t/memories/d/\n1B\t/memories/d/1\n1B\t/memories/d/2\n1B\t/memories/f"),),
         source=DECISION, sdk="raises NotADirectoryError, not a ToolError"),
)  # fmt: skip
