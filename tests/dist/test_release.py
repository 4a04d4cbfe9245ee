"""The release workflow cannot run here; it must call the make targets that do, and publish
without a stored secret."""

from __future__ import annotations

from tests.dist.conftest import REPO

WORKFLOW = (REPO / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8")


def test_the_release_builds_and_tests_with_the_make_targets() -> None:
    runs = [line.strip() for line in WORKFLOW.splitlines() if line.strip().startswith("run: make ")]
    assert runs == ["run: make dist", "run: make test-dist", "run: make lambda-layer"]
    assert 'tags: ["v*"]' in WORKFLOW
    assert 'test "$GITHUB_REF_NAME" = "v$version"' in WORKFLOW


def test_the_release_publishes_by_trusted_publishing_with_provenance_and_an_sbom() -> None:
    assert "uses: pypa/gh-action-pypi-publish@release/v1" in WORKFLOW
    assert "password" not in WORKFLOW
    assert "secrets." not in WORKFLOW
    assert "id-token: write     # trusted publishing" in WORKFLOW
    assert "uses: actions/attest-build-provenance@v2" in WORKFLOW
    assert "uses: anchore/sbom-action@v0" in WORKFLOW
    assert "dist/*.whl dist/*.tar.gz dist/*.zip dist/*.spdx.json" in WORKFLOW
