"""A typo must not create an agent: operator commands on an agent with no objects say so and exit 1.

`require_agent` runs before a per-agent command reads or writes anything: one LIST (MaxKeys=1) of
the agent's root, and, when nothing is there, of its keystore in a separate keystore bucket and
(for the commands that work on versions) of its versions. A root that holds other agents (their
own `.s3memory/` one level down) rather than files, as every agent looks under `--prefix ""`, is
named as what it is. Only `import` (and the tools) create agents.
"""

from __future__ import annotations

from s3memory.core import paths
from s3memory.storage.admin_store import AdminStore
from s3memory.storage.store import Page

from .exits import Failed, UsageError

_BOOKKEEPING = ".s3memory/"
_LOOKED_AT = 3  # subfolders checked for an agent's bookkeeping when the root has none of its own


def _agents_below(store: AdminStore, root: str, page: Page | None = None) -> list[str]:
    """The agent ids one level below `root`, if `root` looks like a prefix of agents (no bookkeeping
    of its own, some of its first subfolders with theirs); else []. `page`: the root's first
    listing with Delimiter "/", if the caller has it."""
    subs = (page or store.list_page(root, delimiter="/")[0]).prefixes
    if root + _BOOKKEEPING in subs:
        return []
    found = []
    for sub in subs[:_LOOKED_AT]:
        name = sub[len(root) : -1]
        if _is_agent_id(name) and store.exists_under(sub + _BOOKKEEPING):
            found.append(name)
    return found


def _is_agent_id(name: str) -> bool:
    try:
        paths.validate_agent_id(name)
    except ValueError:
        return False
    return True


def _prefix_hint(bucket: str, root: str, agents: list[str]) -> str:
    shown = ", ".join(agents) + (", ..." if len(agents) == _LOOKED_AT else "")
    return f"s3://{bucket}/{root} holds agents ({shown}), not the files of one agent; did you mean --prefix {root}?"


def require_agent(store: AdminStore, keystore: AdminStore, prefix: str, agent: str, *, versions: bool = False) -> None:
    """`Failed` (exit 1) unless something is stored for `agent` under `prefix`: one LIST for an agent
    with its bookkeeping, a few more otherwise."""
    root = paths.agent_root(prefix, agent)
    page, _ = store.list_page(root, delimiter="/")
    if page.objects or page.prefixes:
        below = _agents_below(store, root, page)
        if below:
            raise Failed(_prefix_hint(store.bucket, root, below))
        return
    if keystore is not store and keystore.exists_under(root + _BOOKKEEPING):
        return
    if versions and next(iter(store.iter_versions(root)), []):
        return
    raise Failed(
        f"{paths.owner_name(agent)} has no objects under s3://{store.bucket}/{root} (prefix {prefix!r}); "
        f"check {paths.owner_flag(agent).split()[0]} and --prefix{_closest(store, prefix, agent)}"
    )


def empty_mounts(store: AdminStore, keystore: AdminStore, prefix: str, spec: str) -> list[tuple[str, str]]:
    """(mount name, store id) of each mount in `spec` (S3MEMORY_MOUNTS) whose store has nothing
    stored and is not mounted with `:create`: one LIST (MaxKeys=1) per mount, two with a keystore
    bucket. An invalid `spec` is a usage error naming the variable."""
    from s3memory.core.mounts import ENV_VARIABLE, parse_env

    try:
        mounts = parse_env(spec)
    except ValueError as err:
        raise UsageError(f"{ENV_VARIABLE}: {err}") from None
    empty = []
    for name, mount in mounts.items():
        root = paths.agent_root(prefix, paths.store_owner(mount.store))
        if mount.create or store.exists_under(root):
            continue
        if keystore is not store and keystore.exists_under(root + _BOOKKEEPING):
            continue
        empty.append((name, mount.store))
    return empty


def empty_mount_note(name: str, store_id: str) -> str:
    return (
        f"note: S3MEMORY_MOUNTS mounts shared store {store_id} at /memories/{name}, and nothing is stored in it "
        "(is the store id right?); add :create to the mount if it is meant to start empty"
    )


def _closest(store: AdminStore, prefix: str, agent: str) -> str:
    """`; did you mean --agent ID?` naming the stored agent (or store) closest to a mistyped id, from
    the first page of ids under the prefix (one LIST, on this failure only), else ""."""
    import difflib

    stores = paths.store_of(agent) is not None
    root = f"{prefix}{paths.STORES_FOLDER}/" if stores else prefix
    page, _ = store.list_page(root, delimiter="/")
    ids = [p[len(root) : -1] for p in page.prefixes]
    typed = paths.store_of(agent) if stores else agent
    close = difflib.get_close_matches(typed or "", [i for i in ids if i != paths.STORES_FOLDER], n=1)
    return f"; did you mean {'--store' if stores else '--agent'} {close[0]}?" if close else ""


def prefix_note(store: AdminStore, prefix: str, agent: str) -> str | None:
    """`agents`: the note for a listed "agent" that holds agents of its own (as every agent looks
    under `--prefix ""`), else None. One LIST (a few more for a root without bookkeeping)."""
    root = paths.agent_root(prefix, agent)
    below = _agents_below(store, root)
    return f"note: {_prefix_hint(store.bucket, root, below)}" if below else None
