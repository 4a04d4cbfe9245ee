"""A deterministic, realistic agent session: seeded random commands that are valid by construction.

The generator keeps a model of the memory (path → text) and only emits commands that make
sense against it (edit strings that occur exactly once, insert lines in range, renames to free
names...), plus a small share of the errors agents really hit (viewing a path that is not
there, creating a file that exists). Every backend replays the same list of commands.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from s3memory.core import edit

ROOT = "/memories"
TOPICS = ["projects", "customers", "decisions", "people", "research", "bugs", "meetings", "playbooks"]
NAMES = ["alpha", "atlas", "beacon", "cobalt", "delta", "ember", "falcon", "harbor", "indigo", "juniper", "kepler"]
FILES = ["notes", "status", "todo", "summary", "log", "plan", "facts", "questions", "context", "handoff"]
PHRASES = [
    "User prefers concise answers with code first",
    "Deploy pipeline waits for the integration suite",
    "Customer asked for an invoice copy by email",
    "Decision: keep retries bounded at five attempts",
    "Open question about the March renewal date",
    "Next step is to draft the migration checklist",
    "The staging bucket is shared with the QA team",
    "Escalate billing disputes over 500 to a human",
    "Meeting moved to Thursday after the release",
    "Remember to check the error budget before merging",
]

# (kind, weight) of the measured session; kinds are also the rows of the per-command table.
WEIGHTS = [
    ("view_root", 7),
    ("view_dir", 7),
    ("view_file", 22),
    ("create", 16),
    ("str_replace", 20),
    ("insert", 12),
    ("rename_file", 5),
    ("rename_dir", 2),
    ("delete_file", 5),
    ("delete_dir", 1),
    ("error", 3),
]
# A create whose parent is a new directory two or more levels deep is its own row: it checks
# every ancestor for a file (one HEAD each, in parallel), so it is outside the create budget.
NEW_NESTED = "create_new_nested"
KINDS = [kind for kind, _ in WEIGHTS]
KINDS.insert(KINDS.index("create") + 1, NEW_NESTED)


@dataclass(frozen=True)
class Step:
    kind: str
    command: dict[str, Any]
    fails: bool = False


def display(segments: tuple[str, ...]) -> str:
    return ROOT + "".join("/" + s for s in segments)


@dataclass
class Model:
    files: dict[tuple[str, ...], str] = field(default_factory=dict)

    def dirs(self) -> list[tuple[str, ...]]:
        found = {f[:i] for f in self.files for i in range(1, len(f))}
        return sorted(found)

    def is_dir(self, p: tuple[str, ...]) -> bool:
        return any(f[: len(p)] == p and len(f) > len(p) for f in self.files)

    def taken(self, p: tuple[str, ...]) -> bool:
        """True if `p` cannot be created: it exists, or some ancestor is a file."""
        return p in self.files or self.is_dir(p) or any(p[:i] in self.files for i in range(1, len(p)))

    def under(self, d: tuple[str, ...]) -> list[tuple[str, ...]]:
        return [f for f in self.files if f[: len(d)] == d and len(f) > len(d)]


class Generator:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.model = Model()
        self.counter = 0

    def _line(self) -> str:
        self.counter += 1
        return f"[{self.counter:06d}] {self.rng.choice(PHRASES)}"

    def _text(self) -> str:
        return "".join(self._line() + "\n" for _ in range(self.rng.randint(8, 40)))

    def _new_path(self) -> tuple[str, ...]:
        for _ in range(100):
            roll = self.rng.random()
            dirs = self.model.dirs()
            if roll < 0.6 and dirs:
                base = self.rng.choice(dirs)
            elif roll < 0.8:
                base = (self.rng.choice(TOPICS),)
            elif roll < 0.95:
                base = (self.rng.choice(TOPICS), self.rng.choice(NAMES))
            else:
                base = ()
            p = (*base, f"{self.rng.choice(FILES)}-{self.rng.randint(1, 99)}.md")
            if not self.model.taken(p):
                return p
        raise AssertionError("no free path")

    # -- steps --
    def create(self) -> Step:
        p, text = self._new_path(), self._text()
        kind = NEW_NESTED if len(p) >= 3 and not self.model.is_dir(p[:-1]) else "create"
        self.model.files[p] = text
        return Step(kind, {"command": "create", "path": display(p), "file_text": text})

    def seed(self, n_files: int) -> list[Step]:
        return [self.create() for _ in range(n_files)]

    def session(self, n_commands: int) -> list[Step]:
        """The measured session: it starts as the memory protocol says, by viewing /memories."""
        steps = [Step("view_root", {"command": "view", "path": ROOT})]
        kinds, weights = zip(*WEIGHTS, strict=True)
        while len(steps) < n_commands:
            kind = self.rng.choices(kinds, weights)[0]
            step = self.step(kind)
            if step is not None:
                steps.append(step)
        return steps

    def step(self, kind: str) -> Step | None:
        rng, model = self.rng, self.model
        files = sorted(model.files)
        if kind == "view_root":
            return Step(kind, {"command": "view", "path": ROOT})
        if kind == "view_dir":
            dirs = model.dirs()
            return Step(kind, {"command": "view", "path": display(rng.choice(dirs))}) if dirs else None
        if kind == "create":
            return self.create()
        if not files:
            return None
        if kind == "view_file":
            p = rng.choice(files)
            cmd: dict[str, Any] = {"command": "view", "path": display(p)}
            n = len(edit.split_lines(model.files[p]))
            if rng.random() < 0.25 and n > 1:
                start = rng.randint(1, n)
                cmd["view_range"] = [start, rng.choice([-1, min(n, start + rng.randint(0, 10))])]
            return Step(kind, cmd)
        if kind == "str_replace":
            p = rng.choice(files)
            lines = edit.split_lines(model.files[p])
            if not lines:
                return None
            old = rng.choice(lines)
            new = self._line() + ("\n" + self._line() if rng.random() < 0.3 else "")
            model.files[p] = edit.replace_unique(model.files[p], old, new, display(p)).text
            return Step(kind, {"command": "str_replace", "path": display(p), "old_str": old, "new_str": new})
        if kind == "insert":
            p = rng.choice(files)
            n = len(edit.split_lines(model.files[p]))
            line, text = rng.randint(0, n), self._line()
            model.files[p] = edit.insert_text(model.files[p], line, text)
            return Step(kind, {"command": "insert", "path": display(p), "insert_line": line, "insert_text": text})
        if kind == "rename_file":
            p = rng.choice(files)
            q = (*p[:-1], f"{rng.choice(FILES)}-{rng.randint(100, 999)}.md")
            if model.taken(q):
                return None
            model.files[q] = model.files.pop(p)
            return Step(kind, {"command": "rename", "old_path": display(p), "new_path": display(q)})
        if kind == "rename_dir":
            small = [d for d in model.dirs() if len(model.under(d)) <= 20]
            if not small:
                return None
            d = rng.choice(small)
            e = (*d[:-1], f"{d[-1]}-{rng.randint(2, 99)}")
            if model.taken(e):
                return None
            for f in model.under(d):
                model.files[e + f[len(d) :]] = model.files.pop(f)
            return Step(kind, {"command": "rename", "old_path": display(d), "new_path": display(e)})
        if kind == "delete_file":
            p = rng.choice(files)
            del model.files[p]
            return Step(kind, {"command": "delete", "path": display(p)})
        if kind == "delete_dir":
            small = [d for d in model.dirs() if len(model.under(d)) <= 8]
            if not small:
                return None
            d = rng.choice(small)
            for f in model.under(d):
                del model.files[f]
            return Step(kind, {"command": "delete", "path": display(d)})
        if kind == "error":
            if rng.random() < 0.5:
                return Step(kind, {"command": "view", "path": display(("archive", "old-notes.md"))}, fails=True)
            return Step(kind, {"command": "create", "path": display(rng.choice(files)), "file_text": "x\n"}, fails=True)
        raise AssertionError(kind)


def build(seed: int, n_seed_files: int, n_commands: int) -> tuple[list[Step], list[Step]]:
    """(seed steps, measured session steps), identical for every backend."""
    gen = Generator(seed)
    seed_steps = gen.seed(n_seed_files)
    return seed_steps, gen.session(n_commands)
