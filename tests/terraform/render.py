"""Render the module's policy templates the way Terraform's ``templatefile()`` does.

Only a small, exactly specified subset of Terraform's template language is accepted, so that
a template rendered here is byte-for-byte the document Terraform deploys:

* ``${name}`` (spaces allowed inside the braces) is replaced by the string value of ``name``;
  ``name`` is an HCL identifier (``[A-Za-z_][A-Za-z0-9_-]*``).
* ``$${`` renders as a literal ``${`` and ``%%{`` as a literal ``%{``
  (this is how the templates emit IAM policy variables such as ``${aws:PrincipalTag/...}``).
* A ``$`` or ``%`` that is not followed by ``{`` is literal text, as in Terraform.
* A run of three or more ``$`` (or ``%``) before ``{`` is refused as ambiguous.

Everything else raises :class:`TemplateSubsetError`: ``%{...}`` directives, strip markers
(``${~ x}``), expressions, function calls, attribute access and unterminated sequences. Values
must be ``str`` (pass lists through ``json.dumps``, as the module passes ``jsonencode(...)``).
A missing variable raises like Terraform does; unused variables are allowed, as in Terraform.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

_IDENT = r"[A-Za-z_][A-Za-z0-9_-]*"
_INTERPOLATION = re.compile(r"\$\{[ \t]*(" + _IDENT + r")[ \t]*\}")
_TOKEN = re.compile(r"\$\$\{|%%\{|\$\{|%\{")


class TemplateSubsetError(ValueError):
    """The template uses Terraform syntax outside the subset this renderer reproduces exactly."""


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _scan(text: str) -> list[tuple[str, str]]:
    """Split a template into ("text", literal) and ("var", name) parts."""
    ambiguous = re.search(r"(\$\$\$|%%%)\{", text)
    if ambiguous is not None:
        raise TemplateSubsetError(
            f"line {_line_of(text, ambiguous.start())}: a run of three or more $ or % before {{ is ambiguous"
        )
    parts: list[tuple[str, str]] = []
    pos = 0
    for match in _TOKEN.finditer(text):
        if match.start() < pos:  # inside a sequence already consumed
            continue
        parts.append(("text", text[pos : match.start()]))
        token = match.group()
        if token == "$${":
            parts.append(("text", "${"))
            pos = match.end()
        elif token == "%%{":
            parts.append(("text", "%{"))
            pos = match.end()
        elif token == "%{":
            raise TemplateSubsetError(
                f"line {_line_of(text, match.start())}: template directives (%{{...}}) are not supported"
            )
        else:
            interpolation = _INTERPOLATION.match(text, match.start())
            if interpolation is None:
                snippet = text[match.start() : match.start() + 40].split("\n")[0]
                raise TemplateSubsetError(
                    f"line {_line_of(text, match.start())}: only ${{name}} interpolation is supported, got {snippet!r}"
                )
            parts.append(("var", interpolation.group(1)))
            pos = interpolation.end()
    parts.append(("text", text[pos:]))
    return parts


def template_variables(text: str) -> set[str]:
    """The names a template interpolates (what ``templatefile`` must be given)."""
    return {value for kind, value in _scan(text) if kind == "var"}


def render(text: str, variables: Mapping[str, str]) -> str:
    """Render template text exactly as ``templatefile(path, variables)`` would."""
    out: list[str] = []
    for kind, value in _scan(text):
        if kind == "text":
            out.append(value)
            continue
        if value not in variables:
            raise KeyError(f"vars map does not contain key {value!r}")
        replacement = variables[value]
        if not isinstance(replacement, str):
            raise TypeError(f"variable {value!r} must be a str, got {type(replacement).__name__}")
        out.append(replacement)
    return "".join(out)


def render_file(path: Path, variables: Mapping[str, str]) -> str:
    return render(path.read_text(encoding="utf-8"), variables)
