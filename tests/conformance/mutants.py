"""Deliberately wrong backends: `DictMemory` with one rule broken each, to prove the kit catches it."""

from __future__ import annotations

from tests.conformance.dict_memory import ROOT, DictMemory, Refused


class SizeWithoutDecimal(DictMemory):
    """Sizes as the Python SDK's local tool writes them: 2K, 1K, 1M (no decimal when whole)."""

    def size(self, n: int) -> str:
        text = super().size(n)
        return text.replace(".0", "") if text.endswith(("K", "M", "G")) else text


class DirectoryWithoutSlash(DictMemory):
    """Directory entries without their trailing /."""

    def dir_line(self, shown: str) -> str:
        return f"4.0K\t{shown}"


class PrefixSiblingAccepted(DictMemory):
    """/memories_backup/x is taken for /memories/_backup/x (a prefix check without the /)."""

    def inside(self, raw: str) -> bool:
        return raw.startswith(ROOT)

    def path(self, raw: str) -> str:
        if raw.startswith(ROOT) and not super().inside(raw):
            raw = ROOT + "/" + raw[len(ROOT) :]
        return super().path(raw)


class RootRenameAllowed(DictMemory):
    """/memories itself may be renamed: everything moves below the new name."""

    def do_rename(self, old_path: str, new_path: str) -> str:
        old, new = self.path(old_path), self.path(new_path)
        if old != ROOT:
            return super().do_rename(old_path, new_path)
        for name in list(self.files):
            self.files[new + name[len(ROOT) :]] = self.files.pop(name)
        return f"Successfully renamed {old} to {new}"


class NonAtomicRename(DictMemory):
    """A directory rename that moves file by file, checking each destination file only when it gets
    there: a conflict half way leaves the directory half moved."""

    def do_rename(self, old_path: str, new_path: str) -> str:
        old, new = self.path(old_path), self.path(new_path)
        if old in self.files or not self.is_dir(old) or old == ROOT or new.startswith(old + "/"):
            return super().do_rename(old_path, new_path)
        if new in self.files:
            raise Refused(f"Error: The destination {new} already exists")
        for name in sorted(f for f in self.files if f.startswith(old + "/")):
            target = new + name[len(old) :]
            if target in self.files:
                raise Refused(f"Error: The destination {new} already exists")
            parent = self.file_ancestor(target)
            if parent:
                raise Refused(f"Error: Cannot create {new}: {parent} is a file")
            self.files[target] = self.files.pop(name)
        return f"Successfully renamed {old} to {new}"


class LineNumbersFromZero(DictMemory):
    """Line numbers one lower than they should be (an off-by-one in view and the snippet)."""

    first_line = 0


# mutant → the rule it breaks
MUTANTS: dict[type[DictMemory], str] = {
    SizeWithoutDecimal: "view.dir.size-format",
    DirectoryWithoutSlash: "view.dir.trailing-slash",
    PrefixSiblingAccepted: "paths.prefix",
    RootRenameAllowed: "root.rename",
    NonAtomicRename: "rename.atomic",
    LineNumbersFromZero: "view.file.format",
}
