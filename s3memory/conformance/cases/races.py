"""Concurrency, for backends that claim it: calls started together on one memory."""
# A table of literal answers: each expected string is kept whole on its line.
# ruff: noqa: E501

from __future__ import annotations

from s3memory.conformance.model import Race

from .inputs import ROOT, create, delete, insert, rename, replace

F = "Here's the content of /memories/f.md with line numbers:\n"
EDITED = "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
EXISTS = ("Error: File /memories/r.md already exists", True)
# 19 lines: tokens on lines 1, 10 and 19, so each edit's snippet (4 lines of context) shows no other token.
NINETEEN = "t1\n2\n3\n4\n5\n6\n7\n8\n9\nt10\n11\n12\n13\n14\n15\n16\n17\n18\nt19\n"

CASES = (
    Race("race.create", "create", "concurrency", "race.create", "four creates of one path: one wins",
         tuple(create("/memories/r.md", f"writer {n}") for n in range(4)),
         (((("File created successfully at: /memories/r.md", False),) + (EXISTS,) * 3),),
         after=(("/memories/r.md", tuple(f"Here's the content of /memories/r.md with line numbers:\n     1\twriter {n}"
                                          for n in range(4))),)),
    Race("race.edits", "str_replace", "concurrency", "race.edit", "three edits of one file: none is lost",
         (replace("/memories/f.md", "t1\n", "T1\n"), replace("/memories/f.md", "t10\n", "T10\n"),
          replace("/memories/f.md", "t19\n", "T19\n")),
         (((EDITED + "     1\tT1\n     2\t2\n     3\t3\n     4\t4\n     5\t5", False),
           (EDITED + "     6\t6\n     7\t7\n     8\t8\n     9\t9\n    10\tT10\n    11\t11\n    12\t12\n    13\t13\n"
                     "    14\t14", False),
           (EDITED + "    15\t15\n    16\t16\n    17\t17\n    18\t18\n    19\tT19", False)),),
         given=(create("/memories/f.md", NINETEEN),),
         after=(("/memories", (ROOT + "\n51B\t/memories/f.md",)),)),
    Race("race.inserts", "insert", "concurrency", "race.edit", "three inserts at the top: all three land",
         tuple(insert("/memories/f.md", 0, f"line {n}") for n in range(3)),
         ((("The file /memories/f.md has been edited.", False),) * 3,),
         given=(create("/memories/f.md", "end\n"),), after=(("/memories", (ROOT + "\n25B\t/memories/f.md",)),)),
    Race("race.renames", "rename", "concurrency", "race.rename", "two renames of one file: one moves it",
         (rename("/memories/a.md", "/memories/b.md"), rename("/memories/a.md", "/memories/c.md")),
         ((("Successfully renamed /memories/a.md to /memories/b.md", False),
           ("Error: The path /memories/a.md does not exist", True)),
          (("Successfully renamed /memories/a.md to /memories/c.md", False),
           ("Error: The path /memories/a.md does not exist", True))),
         given=(create("/memories/a.md", "a"),),
         after=(("/memories", (ROOT + "\n1B\t/memories/b.md", ROOT + "\n1B\t/memories/c.md")),)),
    Race("race.deletes", "delete", "concurrency", "race.delete",
         "three deletes of one file: it is gone; each answers deleted, or does not exist once another has",
         (delete("/memories/a.md"),) * 3,
         tuple((("Successfully deleted /memories/a.md", False),) * won + (("Error: The path /memories/a.md does not exist", True),) * (3 - won)
               for won in (1, 2, 3)),
         given=(create("/memories/a.md", "a"),), after=(("/memories", (ROOT,)),)),
)  # fmt: skip
