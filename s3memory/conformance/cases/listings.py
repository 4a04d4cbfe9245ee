"""`view` of a directory: header, sizes, trailing slashes, depth, order, hidden names."""
# A table of literal answers: each expected string is kept whole on its line.
# ruff: noqa: E501

from __future__ import annotations

from s3memory.conformance.model import DECISION, Case, Input, gone, seen

from .inputs import ROOT, create, view

SDK_HEAD = "header `..., excluding hidden items:`; sizes from the file system (directories 4K or tmpfs sizes)"
NOTES = (
    "Here're the files and directories up to 2 levels deep in /memories/notes, excluding hidden items and node_modules:"
)


def sized(n: int) -> tuple[Input, ...]:
    """A file of n bytes at /memories/f.txt."""
    return (create("/memories/f.txt", "x" * n),)


CASES = (
    Case("list.doc-example", "view", "listings", "view.dir.size-format",
         "the documentation's own example, byte for byte", view("/memories"),
         ROOT + "\n1.5K\t/memories/customer_service_guidelines.xml\n2.0K\t/memories/refund_policies.xml",
         given=(create("/memories/customer_service_guidelines.xml", "x" * 1536),
                create("/memories/refund_policies.xml", "y" * 2048)),
         sdk="`2K` for 2,048 bytes; " + SDK_HEAD),
    Case("list.size-0", "view", "listings", "view.dir.size-format", "an empty file", view("/memories"),
         ROOT + "\n0B\t/memories/f.txt", given=sized(0), source=DECISION, sdk=SDK_HEAD),
    Case("list.size-1023", "view", "listings", "view.dir.size-format", "the largest size in bytes",
         view("/memories"), ROOT + "\n1023B\t/memories/f.txt", given=sized(1023), source=DECISION, sdk=SDK_HEAD),
    Case("list.size-1024", "view", "listings", "view.dir.size-format", "1,024 bytes is 1.0K, with its decimal",
         view("/memories"), ROOT + "\n1.0K\t/memories/f.txt", given=sized(1024), source=DECISION,
         sdk="`1K`; " + SDK_HEAD),
    Case("list.size-5000", "view", "listings", "view.dir.size-format", "rounded to one decimal place",
         view("/memories"), ROOT + "\n4.9K\t/memories/f.txt", given=sized(5000), source=DECISION, sdk=SDK_HEAD),
    Case("list.size-100000", "view", "listings", "view.dir.size-format", "rounded to one decimal place",
         view("/memories"), ROOT + "\n97.7K\t/memories/f.txt", given=sized(100_000), source=DECISION, sdk=SDK_HEAD),
    Case("list.size-1m", "view", "listings", "view.dir.size-format", "1,048,576 bytes is 1.0M",
         view("/memories"), ROOT + "\n1.0M\t/memories/f.txt", given=sized(1_048_576), source=DECISION,
         sdk="`1M`; " + SDK_HEAD),
    Case("list.dir-entry", "view", "listings", "view.dir.trailing-slash", "a directory entry ends with /",
         view("/memories"), ROOT + "\n4.0K\t/memories/notes/\n1B\t/memories/notes/a.md",
         given=(create("/memories/notes/a.md", "x"),), source=DECISION, sdk=SDK_HEAD),
    Case("list.subdir", "view", "listings", "view.dir.trailing-slash", "the listed directory's own line has no /",
         view("/memories/notes"), NOTES + "\n4.0K\t/memories/notes\n1B\t/memories/notes/a.md",
         given=(create("/memories/notes/a.md", "x"),), source=DECISION, sdk=SDK_HEAD),
    Case("list.dir-size", "view", "listings", "view.dir.dir-size", "every directory is 4.0K, whatever it holds",
         view("/memories"),
         ROOT + "\n4.0K\t/memories/big/\n1.0K\t/memories/big/a\n1.0K\t/memories/big/b\n1.0K\t/memories/big/c"
         "\n4.0K\t/memories/small/\n1B\t/memories/small/a",
         given=(create("/memories/big/a", "x" * 1024), create("/memories/big/b", "x" * 1024),
                create("/memories/big/c", "x" * 1024), create("/memories/small/a", "x")),
         source=DECISION, sdk=SDK_HEAD),
    Case("list.header-subdir", "view", "listings", "view.dir.header", "the header names the directory viewed",
         view("/memories/notes"), NOTES + "\n4.0K\t/memories/notes\n4.0K\t/memories/notes/x/\n1B\t/memories/notes/x/y",
         given=(create("/memories/notes/x/y", "z"),), source=DECISION, sdk=SDK_HEAD),
    Case("list.depth-root", "view", "listings", "view.dir.depth", "two levels below /memories, no deeper",
         view("/memories"), ROOT + "\n4.0K\t/memories/a/\n4.0K\t/memories/a/b/",
         given=(create("/memories/a/b/c/d.md", "x"),), sdk=SDK_HEAD),
    Case("list.depth-sub", "view", "listings", "view.dir.depth", "two levels below the directory viewed",
         view("/memories/a"),
         "Here're the files and directories up to 2 levels deep in /memories/a, excluding hidden items and "
         "node_modules:\n4.0K\t/memories/a\n4.0K\t/memories/a/b/\n4.0K\t/memories/a/b/c/",
         given=(create("/memories/a/b/c/d.md", "x"),), sdk=SDK_HEAD),
    Case("list.depth-files", "view", "listings", "view.dir.depth", "files at each of the two levels",
         view("/memories"), ROOT + "\n1B\t/memories/1.md\n4.0K\t/memories/a/\n1B\t/memories/a/2.md\n4.0K\t/memories/a/b/",
         given=(create("/memories/1.md", "1"), create("/memories/a/2.md", "2"), create("/memories/a/b/3.md", "3")),
         sdk=SDK_HEAD),
    Case("list.order-depth-first", "view", "listings", "view.dir.order",
         "a directory's children come right after it, before its next sibling", view("/memories"),
         ROOT + "\n1B\t/memories/A.md\n4.0K\t/memories/a/\n1B\t/memories/a/x.md\n1B\t/memories/b.md\n1B\t/memories/c.md",
         given=(create("/memories/c.md", "c"), create("/memories/b.md", "b"), create("/memories/a/x.md", "x"),
                create("/memories/A.md", "A")), source=DECISION, sdk=SDK_HEAD),
    Case("list.order-names", "view", "listings", "view.dir.order",
         "sorted by name, not by key: 'a' before 'a-b.md' before 'a.md'", view("/memories"),
         ROOT + "\n4.0K\t/memories/a/\n1B\t/memories/a/x\n1B\t/memories/a-b.md\n1B\t/memories/a.md",
         given=(create("/memories/a.md", "1"), create("/memories/a-b.md", "2"), create("/memories/a/x", "3")),
         source=DECISION, sdk=SDK_HEAD),
    Case("list.order-strings", "view", "listings", "view.dir.order", "string order: f10 before f2",
         view("/memories"),
         ROOT + "\n1B\t/memories/f1\n1B\t/memories/f10\n1B\t/memories/f11\n1B\t/memories/f2\n1B\t/memories/f9",
         given=tuple(create(f"/memories/f{n}", "x") for n in (2, 10, 1, 9, 11)), source=DECISION, sdk=SDK_HEAD),
    Case("list.hidden", "view", "listings", "view.dir.hidden", "hidden files and directories are left out",
         view("/memories"), ROOT + "\n1B\t/memories/v.md",
         given=(create("/memories/.hidden.md", "h"), create("/memories/.cache/x.md", "x"),
                create("/memories/v.md", "v")), sdk=SDK_HEAD),
    Case("list.hidden-nested", "view", "listings", "view.dir.hidden", "at every level",
         view("/memories"), ROOT + "\n4.0K\t/memories/p/\n1B\t/memories/p/v.md",
         given=(create("/memories/p/.h/x.md", "x"), create("/memories/p/.h.md", "h"), create("/memories/p/v.md", "v")),
         sdk=SDK_HEAD),
    Case("list.node-modules", "view", "listings", "view.dir.hidden", "node_modules is left out",
         view("/memories"), ROOT + "\n1B\t/memories/v.md",
         given=(create("/memories/node_modules/x.js", "x"), create("/memories/v.md", "v")),
         sdk="lists node_modules/ and its files; " + SDK_HEAD),
    Case("list.node-modules-nested", "view", "listings", "view.dir.hidden", "node_modules at the second level",
         view("/memories"), ROOT + "\n4.0K\t/memories/p/\n1B\t/memories/p/v.md",
         given=(create("/memories/p/node_modules/x.js", "x"), create("/memories/p/v.md", "v")),
         sdk="lists p/node_modules/; " + SDK_HEAD),
    Case("list.only-hidden", "view", "listings", "view.dir.hidden", "a directory holding only hidden files",
         view("/memories/notes"), NOTES + "\n4.0K\t/memories/notes", given=(create("/memories/notes/.h", "h"),),
         sdk=SDK_HEAD),
    Case("list.hidden-file-view", "view", "listings", "view.dir.hidden", "a hidden file can still be viewed",
         view("/memories/.h.md"), "Here's the content of /memories/.h.md with line numbers:\n     1\thidden",
         given=(create("/memories/.h.md", "hidden\n"),)),
    Case("list.prefix-sibling", "view", "listings", "view.dir.prefix-sibling",
         "d2/ and d.md share d's prefix but are not in it", view("/memories/d"),
         "Here're the files and directories up to 2 levels deep in /memories/d, excluding hidden items and "
         "node_modules:\n4.0K\t/memories/d\n1B\t/memories/d/a",
         given=(create("/memories/d/a", "a"), create("/memories/d2/b", "b"), create("/memories/d.md", "c")),
         sdk=SDK_HEAD),
    Case("list.missing", "view", "listings", "view.missing", "nothing at the path", view("/memories/nope"),
         "The path /memories/nope does not exist. Please provide a valid path.", True),
    Case("list.below-a-file", "view", "listings", "view.missing", "a file has no children",
         view("/memories/a.md/b"), "The path /memories/a.md/b does not exist. Please provide a valid path.", True,
         given=(create("/memories/a.md", "a"),)),
    Case("list.prefix-not-dir", "view", "listings", "view.dir.prefix-sibling",
         "a prefix of a name is not a directory", view("/memories/no"),
         "The path /memories/no does not exist. Please provide a valid path.", True,
         given=(create("/memories/notes.md", "n"),), after=(gone("/memories/not"),)),
    Case("list.after-create", "create", "listings", "create.parents", "a file's parents appear in the listing",
         create("/memories/a/b/c.md", "c"), "File created successfully at: /memories/a/b/c.md",
         after=(seen("/memories", ROOT + "\n4.0K\t/memories/a/\n4.0K\t/memories/a/b/"),
                seen("/memories/a/b", "Here're the files and directories up to 2 levels deep in /memories/a/b, "
                     "excluding hidden items and node_modules:\n4.0K\t/memories/a/b\n1B\t/memories/a/b/c.md")),
         sdk=SDK_HEAD),
)  # fmt: skip
