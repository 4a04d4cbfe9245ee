from tests.support import err, ok


def test_documentation_example_listing(tool):
    ok(tool, command="create", path="/memories/customer_service_guidelines.xml", file_text="x" * 1536)
    ok(tool, command="create", path="/memories/refund_policies.xml", file_text="y" * 2048)
    assert ok(tool, command="view", path="/memories") == (
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n"
        "4.0K\t/memories\n"
        "1.5K\t/memories/customer_service_guidelines.xml\n"
        "2.0K\t/memories/refund_policies.xml"
    )


def test_missing_file_view(tool):
    assert err(tool, command="view", path="/memories/nope") == (
        "The path /memories/nope does not exist. Please provide a valid path."
    )
