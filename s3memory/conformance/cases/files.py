"""`view` of a file: line numbers, the line model, `view_range`, long files and the line limit; `create`."""
# A table of literal answers: each expected string is kept whole on its line.
# ruff: noqa: E501

from __future__ import annotations

from s3memory.conformance.model import DECISION, Case, Input, gone, seen

from .inputs import ROOT, create, view

F = "Here's the content of /memories/f.md with line numbers:\n"
FIVE = (create("/memories/f.md", "one\ntwo\nthree\nfour\nfive\n"),)
AB = (create("/memories/f.md", "a\nb\n"),)
SDK_LINES = "shows the empty piece after the final newline as a numbered line"
SDK_RANGE = "does not check view_range: clamps start to 1 and slices"


def rng(start: int, end: int) -> Input:
    return view("/memories/f.md", [start, end])


def range_error(start: int, end: int, n: int) -> str:
    return (
        f"Error: Invalid `view_range` parameter: [{start}, {end}]. "
        f"It should be within the range of lines of the file: [1, {n}]"
    )


CASES = (
    Case("file.two-lines", "view", "files", "view.file.format", "numbers right-aligned to 6, a tab, the line",
         view("/memories/f.md"), F + "     1\ta\n     2\tb", given=AB, sdk=SDK_LINES),
    Case("file.no-final-newline", "view", "files", "view.file.lines", "a last line without \\n is a line",
         view("/memories/f.md"), F + "     1\ta\n     2\tb", given=(create("/memories/f.md", "a\nb"),)),
    Case("file.empty", "view", "files", "view.file.lines", "an empty file is the header alone",
         view("/memories/f.md"), F[:-1], given=(create("/memories/f.md", ""),), sdk="shows `     1\\t` (one empty line)"),
    Case("file.one-newline", "view", "files", "view.file.lines", "\\n alone is one empty line",
         view("/memories/f.md"), F + "     1\t", given=(create("/memories/f.md", "\n"),), sdk=SDK_LINES),
    Case("file.blank-last", "view", "files", "view.file.lines", "a\\n\\n is a line and an empty line",
         view("/memories/f.md"), F + "     1\ta\n     2\t", given=(create("/memories/f.md", "a\n\n"),), sdk=SDK_LINES),
    Case("file.width-10", "view", "files", "view.file.format", "two-digit numbers keep the width of 6",
         view("/memories/f.md"),
         F + "     1\t1\n     2\t2\n     3\t3\n     4\t4\n     5\t5\n     6\t6\n     7\t7\n     8\t8\n     9\t9\n    10\t10",
         given=(create("/memories/f.md", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10"),)),
    Case("file.range-middle", "view", "files", "view.range", "inclusive at both ends", rng(2, 3),
         F + "     2\ttwo\n     3\tthree", given=FIVE),
    Case("file.range-to-end", "view", "files", "view.range", "-1 is the last line", rng(2, -1),
         F + "     2\ttwo\n     3\tthree\n     4\tfour\n     5\tfive", given=FIVE, sdk=SDK_LINES),
    Case("file.range-past-end", "view", "files", "view.range", "an end past the last line means the last line",
         rng(4, 100), F + "     4\tfour\n     5\tfive", given=FIVE, sdk=SDK_LINES),
    Case("file.range-one", "view", "files", "view.range", "a single line", rng(1, 1), F + "     1\tone", given=FIVE),
    Case("file.range-last", "view", "files", "view.range", "the last line alone", rng(5, 5), F + "     5\tfive",
         given=FIVE),
    Case("file.range-whole", "view", "files", "view.range", "[1, -1] is the whole file", rng(1, -1),
         F + "     1\tone\n     2\ttwo\n     3\tthree\n     4\tfour\n     5\tfive", given=FIVE, sdk=SDK_LINES),
    Case("file.range-final-newline", "view", "files", "view.range",
         "the empty piece after a final newline is not a line to range over", rng(2, -1), F + "     2\tb", given=AB,
         sdk=SDK_LINES),
    Case("file.range-zero", "view", "files", "view.range.invalid", "start 0 is before the first line", rng(0, 2),
         range_error(0, 2, 5), True, given=FIVE, source=DECISION, sdk=SDK_RANGE),
    Case("file.range-negative", "view", "files", "view.range.invalid", "a negative start", rng(-1, -1),
         range_error(-1, -1, 5), True, given=FIVE, source=DECISION, sdk=SDK_RANGE),
    Case("file.range-after-end", "view", "files", "view.range.invalid", "start past the last line", rng(6, 7),
         range_error(6, 7, 5), True, given=FIVE, source=DECISION, sdk=SDK_RANGE),
    Case("file.range-reversed", "view", "files", "view.range.invalid", "end before start", rng(3, 2),
         range_error(3, 2, 5), True, given=FIVE, source=DECISION, sdk=SDK_RANGE),
    Case("file.range-minus-two", "view", "files", "view.range.invalid", "an end below start that is not -1",
         rng(3, -2), range_error(3, -2, 5), True, given=FIVE, source=DECISION, sdk=SDK_RANGE),
    Case("file.range-empty-file", "view", "files", "view.range.invalid", "an empty file has no line 1", rng(1, 1),
         range_error(1, 1, 0), True, given=(create("/memories/f.md", ""),), source=DECISION, sdk=SDK_RANGE),
    Case("file.range-phantom-line", "view", "files", "view.range.invalid",
         "line 3 of a\\nb\\n does not exist", rng(3, 3), range_error(3, 3, 2), True, given=AB, source=DECISION,
         sdk="shows `     3\\t`"),
    Case("file.missing", "view", "files", "view.missing", "no file at the path", view("/memories/f.md"),
         "The path /memories/f.md does not exist. Please provide a valid path.", True),
    # -- long files and the line limit --
    Case("long.tail", "view", "limits", "view.range", "the end of a 1,000-line file",
         rng(998, 1000), F + "   998\tx\n   999\tx\n  1000\tx", given=(create("/memories/f.md", "x\n" * 1000),)),
    Case("long.six-digits", "view", "limits", "view.file.format", "line 100,000 fills the 6 columns",
         rng(99_999, -1), F + " 99999\ty\n100000\ty", given=(create("/memories/f.md", "y\n" * 100_000),),
         sdk=SDK_LINES),
    Case("long.999999", "view", "limits", "view.max-lines", "999,999 lines are allowed (a final \\n is no line)",
         rng(999_999, -1), F + "999999\t", given=(create("/memories/f.md", "\n" * 999_999),),
         sdk="counts the empty piece after the final newline: 1,000,000 lines, over the limit"),
    Case("long.1000000", "view", "limits", "view.max-lines", "1,000,000 lines are over the limit",
         view("/memories/f.md"), "File /memories/f.md exceeds maximum line limit of 999,999 lines.", True,
         given=(create("/memories/f.md", "\n" * 1_000_000),)),
    # -- create --
    Case("create.new", "create", "files", "create.success", "the success answer, then the text as stored",
         create("/memories/f.md", "a\nb\n"), "File created successfully at: /memories/f.md",
         after=(seen("/memories/f.md", F + "     1\ta\n     2\tb"),), sdk=SDK_LINES),
    Case("create.exact", "create", "files", "create.success", "no newline is added (3 bytes stay 3)",
         create("/memories/f.md", "abc"), "File created successfully at: /memories/f.md",
         after=(seen("/memories", ROOT + "\n3B\t/memories/f.md"),), sdk="header and the root's size"),
    Case("create.empty", "create", "files", "create.success", "an empty file", create("/memories/f.md", ""),
         "File created successfully at: /memories/f.md", after=(seen("/memories", ROOT + "\n0B\t/memories/f.md"),),
         sdk="header and the root's size"),
    Case("create.over-file", "create", "files", "create.exists", "a file is never overwritten by create",
         create("/memories/f.md", "new"), "Error: File /memories/f.md already exists", True,
         given=(create("/memories/f.md", "old\n"),), after=(seen("/memories/f.md", F + "     1\told"),),
         sdk="`File /memories/f.md already exists` (no `Error: `)"),
    Case("create.over-dir", "create", "files", "create.exists", "a directory is there already",
         create("/memories/d", "x"), "Error: File /memories/d already exists", True,
         given=(create("/memories/d/a", "a"),), after=(seen("/memories/d/a", "Here's the content of /memories/d/a "
                                                             "with line numbers:\n     1\ta"),),
         sdk="`File /memories/d already exists` (no `Error: `)"),
    Case("create.below-file", "create", "files", "create.parent-file", "a file cannot hold files",
         create("/memories/f.md/x.md", "x"), "Error: Cannot create /memories/f.md/x.md: /memories/f.md is a file",
         True, given=(create("/memories/f.md", "f"),), after=(gone("/memories/f.md/x.md"),), source=DECISION,
         sdk="raises NotADirectoryError, not a ToolError"),
    Case("create.below-file-deep", "create", "files", "create.parent-file", "the ancestor that is a file is named",
         create("/memories/f.md/x/y.md", "x"),
         "Error: Cannot create /memories/f.md/x/y.md: /memories/f.md is a file", True,
         given=(create("/memories/f.md", "f"),), source=DECISION, sdk="raises NotADirectoryError, not a ToolError"),
    Case("create.parents", "create", "files", "create.parents", "parents are made with the file",
         create("/memories/x/y/z.md", "z"), "File created successfully at: /memories/x/y/z.md",
         after=(seen("/memories/x/y/z.md", "Here's the content of /memories/x/y/z.md with line numbers:\n     1\tz"),)),
    Case("create.sibling-name", "create", "files", "create.prefix-sibling", "a.md.bak beside a.md",
         create("/memories/a.md.bak", "b"), "File created successfully at: /memories/a.md.bak",
         given=(create("/memories/a.md", "a"),),
         after=(seen("/memories", ROOT + "\n1B\t/memories/a.md\n1B\t/memories/a.md.bak"),),
         sdk="header and the root's size"),
    Case("create.file-beside-dir", "create", "files", "create.prefix-sibling", "d.md beside the directory d",
         create("/memories/d.md", "f"), "File created successfully at: /memories/d.md",
         given=(create("/memories/d/a", "a"),),
         after=(seen("/memories", ROOT + "\n4.0K\t/memories/d/\n1B\t/memories/d/a\n1B\t/memories/d.md"),),
         sdk="header and the sizes"),
)  # fmt: skip
