"""Unicode and line endings: text and names stored, sized and shown exactly."""

from __future__ import annotations

from s3memory.conformance.model import Case, Input, seen

from .inputs import ROOT, create, insert, replace, view

F = "Here's the content of /memories/f.md with line numbers:\n"
EDITED = "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
SDK_HEAD = "header `..., excluding hidden items:` and the root's size from the file system"
SDK_LINES = "shows the empty piece after the final newline as a numbered line"


def one(text: str) -> tuple[Input, ...]:
    return (create("/memories/f.md", text),)


CASES = (
    Case("text.accents", "view", "unicode", "text.exact", "non-ASCII text comes back as written",
         view("/memories/f.md"), F + "     1\théllo wörld ✓", given=one("héllo wörld ✓\n"), sdk=SDK_LINES),
    Case("text.accents-size", "view", "unicode", "text.size", "18 bytes of UTF-8 in 14 characters",
         view("/memories"), ROOT + "\n18B\t/memories/f.md", given=one("héllo wörld ✓\n"), sdk=SDK_HEAD),
    Case("text.cjk-size", "view", "unicode", "text.size", "3 bytes a character", view("/memories"),
         ROOT + "\n10B\t/memories/f.md", given=one("日本語\n"), sdk=SDK_HEAD),
    Case("text.emoji", "view", "unicode", "text.exact", "a character outside the BMP",
         view("/memories/f.md"), F + "     1\t🙂", given=one("🙂\n"), sdk=SDK_LINES),
    Case("text.emoji-size", "view", "unicode", "text.size", "4 bytes, counted once", view("/memories"),
         ROOT + "\n5B\t/memories/f.md", given=one("🙂\n"), sdk=SDK_HEAD),
    Case("text.crlf", "view", "unicode", "text.exact", "lines end at \\n; the \\r stays in the line",
         view("/memories/f.md"), F + "     1\ta\r\n     2\tb\r", given=one("a\r\nb\r\n"), sdk=SDK_LINES),
    Case("text.crlf-size", "view", "unicode", "text.size", "\\r\\n is two bytes, never converted",
         view("/memories"), ROOT + "\n6B\t/memories/f.md", given=one("a\r\nb\r\n"), sdk=SDK_HEAD),
    Case("text.lone-cr", "view", "unicode", "text.exact", "a lone \\r does not end a line",
         view("/memories/f.md"), F + "     1\ta\rb", given=one("a\rb")),
    Case("text.line-separator", "view", "unicode", "text.exact", "U+2028 does not end a line",
         view("/memories/f.md"), F + "     1\ta\u2028b\n     2\tc", given=one("a\u2028b\nc")),
    Case("text.tabs-spaces", "view", "unicode", "text.exact", "tabs and trailing spaces are kept",
         view("/memories/f.md"), F + "     1\t\tindented  \n     2\t  ", given=one("\tindented  \n  ")),
    Case("text.crlf-range", "view", "unicode", "text.exact", "a range of \\r\\n lines",
         view("/memories/f.md", [2, 2]), F + "     2\tb\r", given=one("a\r\nb\r\nc\r\n")),
    Case("text.crlf-replace", "str_replace", "unicode", "text.exact", "a \\r\\n line removed",
         replace("/memories/f.md", "a\r\n", ""), EDITED + "     1\tb\r", given=one("a\r\nb\r\n"),
         after=(seen("/memories", ROOT + "\n3B\t/memories/f.md"),),
         sdk="snippet of 2 lines before and 2 after, counting the empty piece after a final newline"),
    Case("text.crlf-insert", "insert", "unicode", "text.exact", "inserted lines end with \\n; the others keep \\r\\n",
         insert("/memories/f.md", 1, "x"), "The file /memories/f.md has been edited.", given=one("a\r\nb\r\n"),
         after=(seen("/memories/f.md", F + "     1\ta\r\n     2\tx\n     3\tb\r"),
                seen("/memories", ROOT + "\n8B\t/memories/f.md"))),
    Case("text.unicode-replace", "str_replace", "unicode", "text.exact", "old_str and new_str in any script",
         replace("/memories/f.md", "é", "e\u0301"), EDITED + "     1\tcafe\u0301", given=one("café"),
         after=(seen("/memories", ROOT + "\n6B\t/memories/f.md"),), sdk="header and the root's size"),
    Case("names.accented", "create", "unicode", "text.names", "an accented name",
         create("/memories/café.md", "c"), "File created successfully at: /memories/café.md",
         after=(seen("/memories/café.md", "Here's the content of /memories/café.md with line numbers:\n     1\tc"),)),
    Case("names.cjk", "create", "unicode", "text.names", "names in another script, two levels",
         create("/memories/笔记/日记.md", "d"), "File created successfully at: /memories/笔记/日记.md",
         after=(seen("/memories", ROOT + "\n4.0K\t/memories/笔记/\n1B\t/memories/笔记/日记.md"),), sdk=SDK_HEAD),
    Case("names.order", "view", "unicode", "text.names", "sorted by code point: Z, z, ä, é, 日",
         view("/memories"),
         ROOT + "\n1B\t/memories/Z.md\n1B\t/memories/z.md\n1B\t/memories/ä\n1B\t/memories/é.md\n1B\t/memories/日记",
         given=tuple(create("/memories/" + name, "x") for name in ("日记", "é.md", "z.md", "ä", "Z.md")), sdk=SDK_HEAD),
    Case("names.emoji-rename", "rename", "unicode", "text.names", "a rename to a name with an emoji",
         {"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/🙂.md"},
         "Successfully renamed /memories/a.md to /memories/🙂.md", given=(create("/memories/a.md", "a"),),
         after=(seen("/memories", ROOT + "\n1B\t/memories/🙂.md"),), sdk=SDK_HEAD),
    Case("names.spaces", "create", "unicode", "text.names", "spaces in names are kept",
         create("/memories/my notes/to do.md", "t"), "File created successfully at: /memories/my notes/to do.md",
         after=(seen("/memories/my notes/to do.md",
                     "Here's the content of /memories/my notes/to do.md with line numbers:\n     1\tt"),)),
)  # fmt: skip
