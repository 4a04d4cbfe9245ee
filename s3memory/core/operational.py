"""The operational errors the model sees: storage, keys, integrity, contention. Pure.

Beside `messages` (the commands' own answers), and like them byte for byte as docs/contract.md
lists them ("Operational errors"); `memory.explain` chooses which one a failure gets.
"""

from __future__ import annotations

from collections.abc import Sequence


def storage_unavailable(code: str) -> str:
    return f"Error: Memory storage is unavailable right now ({code}); nothing was changed. Try again."


def storage_unavailable_partial(code: str, display: str) -> str:
    return (
        f"Error: Memory storage is unavailable right now ({code}) while changing {display}. "
        "No file was lost; the unfinished change will be completed by the next command. Try again."
    )


def change_uncertain(code: str, displays: Sequence[str]) -> str:
    """A write's answer was lost and reading back could not tell whether it was applied."""
    shown = " and ".join(displays)
    return (
        f"Error: Memory storage is unavailable right now ({code}) and did not confirm the change to {shown}; "
        f"it may have been applied. View {shown} to check before trying again."
    )


def rename_left_copy(code: str, old: str, new: str) -> str:
    return (
        f"Error: Memory storage is unavailable right now ({code}) while renaming {old}: its content is now also "
        f"at {new}, but {old} could not be removed. No file was lost; delete {old} once storage is back."
    )


def storage_denied() -> str:
    return "Error: Memory storage refused access (AccessDenied); nothing was changed."


def storage_refused(code: str) -> str:
    return (
        f"Error: Memory storage refused the request ({code}); nothing was changed. "
        "Retrying the same request will not help."
    )


def storage_misconfigured(code: str) -> str:
    return (
        f"Error: Memory storage is not configured correctly ({code}); nothing was changed. "
        "An operator must fix the configuration."
    )


def change_incomplete(code: str, display: str) -> str:
    """A directory change met a failure that retrying will not fix; what was not moved stayed put."""
    return (
        f"Error: Memory storage refused a request ({code}) while changing {display}. "
        "No file was lost: what could not be moved is still at its old path."
    )


def change_blocked(code: str, display: str) -> str:
    """An interrupted directory change that cannot be completed blocks the paths it covers, and only those."""
    return (
        f"Error: An unfinished change of {display} cannot be completed ({code}). No file was lost; "
        f"commands under {display} wait until an operator runs s3memory repair for this agent."
    )


def keys_misconfigured(code: str) -> str:
    return (
        f"Error: The encryption key cannot be used ({code}); nothing was changed. "
        "An operator must fix the key configuration."
    )


def names_mismatch(code: str) -> str:
    return (
        f"Error: This memory stores its file names in another way than this tool is set up for ({code}); "
        "nothing was changed. An operator must fix the configuration."
    )


def agent_erasing() -> str:
    return (
        "Error: This memory is being erased (AgentErasing); nothing was changed. "
        "An operator must finish erasing it before it can be used again."
    )


def keys_unavailable(code: str) -> str:
    return f"Error: The encryption key service is unavailable right now ({code}); nothing was changed. Try again."


def integrity_failed(display: str) -> str:
    return f"Error: The file {display} failed its integrity check and cannot be read"


def active_key_integrity(display: str) -> str:
    return (
        f"Error: This memory's encryption key failed its integrity check, so {display} was not written. "
        "An operator must check the memory's keys (s3memory verify)."
    )


def names_unauthenticated() -> str:
    return (
        "Error: This memory's record of how it stores file names failed its integrity check; nothing was changed. "
        "An operator must check the memory's keys (s3memory verify)."
    )


def key_retired(display: str) -> str:
    return (
        f"Error: The file {display} cannot be read: the key it was encrypted with was retired by an operator. "
        "Retrying will not help."
    )


def keys_destroyed(display: str) -> str:
    return (
        f"Error: The file {display} cannot be read: the keys it was encrypted with were destroyed. "
        "Retrying will not help."
    )


def busy(display: str) -> str:
    return (
        f"Error: The file {display} kept changing while it was being edited by another writer; "
        "nothing was changed. Try again."
    )
