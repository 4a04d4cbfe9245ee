"""Mounts: shared stores a tool shows the model as directories `/memories/<mount>/`. Pure.

`Mount(store, read_only=True, create=False)` names a store (see `paths.store_owner`); a tool's `mounts` maps mount
names to them. Mount names follow the agent-id rules (so `.s3memory` and hidden names are never
one). This module checks them, reads `S3MEMORY_MOUNTS` / `--mount` text, says which mount a path
lies in, and folds the mounts into the listing of `/memories`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .paths import ROOT, MemoryPath, validate_store_id
from .tree import Entry, entries

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
# One mount in S3MEMORY_MOUNTS or --mount: NAME=STORE, optionally :ro (the default) or :rw, then
# optionally :create (a store meant to start empty: no warning while nothing is stored in it).
_SPEC = re.compile(r"(?P<name>[^=]*)=(?P<store>[^:]*)(?::(?P<mode>[^:]*))?(?::(?P<create>[^:]*))?")
MODES = {"ro": True, "rw": False}
CREATE = "create"
SPEC_FORMS = "NAME=STORE, NAME=STORE:ro or NAME=STORE:rw, optionally followed by :create"
ENV_VARIABLE = "S3MEMORY_MOUNTS"


@dataclass(frozen=True)
class Mount:
    """A shared store shown at `/memories/<mount>/`: read-only unless `read_only=False`. A store
    with nothing stored is logged once per tool (a typo'd store id shows an empty directory),
    unless `create=True`: it is meant to start empty."""

    store: str
    read_only: bool = True
    create: bool = False

    def __init__(self, store: str, *, read_only: bool = True, create: bool = False) -> None:
        if not isinstance(read_only, bool):
            raise TypeError("read_only must be True or False")
        if not isinstance(create, bool):
            raise TypeError("create must be True or False")
        object.__setattr__(self, "store", validate_store_id(store))
        object.__setattr__(self, "read_only", read_only)
        object.__setattr__(self, "create", create)


def validate_mount_name(name: object) -> str:
    """Return `name` if it is 1-128 of `[A-Za-z0-9._-]` starting alphanumeric, else ValueError."""
    if not isinstance(name, str) or _NAME.fullmatch(name) is None:
        raise ValueError(
            f"mount name {name!r} must be 1-128 characters of letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return name


def checked(mounts: object) -> dict[str, Mount]:
    """`mounts` as a dict of checked names to `Mount`s (None: no mounts)."""
    if mounts is None:
        return {}
    if not isinstance(mounts, Mapping):
        raise TypeError('mounts must be a dict of mount names to Mount(...), e.g. {"guidelines": Mount("support")}')
    table: dict[str, Mount] = {}
    for name, mount in mounts.items():
        if not isinstance(mount, Mount):
            raise TypeError(f"mounts[{name!r}] must be Mount(store, read_only=...)")
        table[validate_mount_name(name)] = mount
    return table


def parse_spec(spec: str) -> tuple[str, Mount]:
    """One `NAME=STORE[:ro|:rw][:create]` (as `--mount` takes it); ValueError saying what is wrong."""
    match = _SPEC.fullmatch(spec.strip())
    if match is None:
        raise ValueError(f"mount {spec!r} must be {SPEC_FORMS}")
    mode, create = match["mode"], match["create"]
    if mode == CREATE and create is None:  # NAME=STORE:create: read-only, meant to start empty
        mode, create = None, CREATE
    if mode is not None and mode not in MODES:
        raise ValueError(f"mount {spec!r}: the mode after ':' must be ro, rw or create")
    if create is not None and create != CREATE:
        raise ValueError(f"mount {spec!r}: only :create may follow the mode")
    name = validate_mount_name(match["name"])
    return name, Mount(match["store"], read_only=MODES[mode or "ro"], create=create is not None)


def parse_specs(specs: Iterable[str]) -> dict[str, Mount]:
    """Several specs; a name given twice is an error."""
    table: dict[str, Mount] = {}
    for spec in specs:
        name, mount = parse_spec(spec)
        if name in table:
            raise ValueError(f"mount name {name!r} is given twice")
        table[name] = mount
    return table


def parse_env(text: str) -> dict[str, Mount]:
    """`S3MEMORY_MOUNTS`: comma-separated specs ("" or blanks: no mounts)."""
    return parse_specs(part for part in text.split(",") if part.strip())


def split(path: MemoryPath, names: Iterable[str]) -> tuple[str, MemoryPath] | None:
    """(mount name, the path inside the store) if `path` lies in one of the mounts `names`."""
    if path.segments and path.segments[0] in names:
        return path.segments[0], MemoryPath(path.segments[1:])
    return None


def inner_raw(raw: str, mount: str) -> str:
    """The path `raw` (which lies in `mount`) as the store's own memory names it, trailing "/" kept."""
    return ROOT + raw[len(ROOT) + 1 + len(mount) :]


_SHOWN_PATH = re.compile(re.escape(ROOT) + r"(?![A-Za-z0-9._-])")


def outer_text(text: str, mount: str) -> str:
    """A store's answer (or error) with every memory path in it shown below `/memories/<mount>`.

    Only the contract's messages are given here: the two that echo the model's text beside a
    path (`old_str`, `insert_line`) and the argument errors are rewritten where the path is, or
    left alone."""
    at = f"{ROOT}/{mount}"
    if text.startswith(("No replacement was performed. ", "Error: Invalid `")):
        return text  # no path in them; the echoed text is the model's own
    if text.startswith("No replacement was performed, old_str `"):
        head, sep, tail = text.rpartition("` did not appear verbatim in ")
        return head + sep + _SHOWN_PATH.sub(at, tail)
    return _SHOWN_PATH.sub(at, text)


def root_entries(own: Iterable[Entry], mounted: Mapping[str, Iterable[Entry]]) -> list[Entry]:
    """The listing of `/memories`: the agent's own entries with each mount as a directory holding
    the first level of its store (two levels deep in all). A mount shadows an own entry of its name."""
    files: list[tuple[tuple[str, ...], int]] = []
    dirs: list[tuple[str, ...]] = []
    for entry in own:
        segments = tuple(entry.name.rstrip("/").split("/"))
        if segments[0] in mounted:
            continue
        if entry.size is None:
            dirs.append(segments)
        else:
            files.append((segments, entry.size))
    for name, inside in mounted.items():
        dirs.append((name,))
        for entry in inside:
            segments = (name, *entry.name.rstrip("/").split("/"))
            if len(segments) > 2:
                continue
            if entry.size is None:
                dirs.append(segments)
            else:
                files.append((segments, entry.size))
    return entries(files, dirs)


def shadowed(own: Iterable[Entry], names: Iterable[str]) -> list[str]:
    """The mount names an own top-level entry also has (the mount hides it)."""
    wanted = set(names)
    return sorted({entry.name.rstrip("/") for entry in own if "/" not in entry.name.rstrip("/")} & wanted)
