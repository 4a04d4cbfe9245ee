"""The sensitive-data guard: what it refuses, what it must let through, and how it answers.

Sample secrets are assembled from pieces so that repository secret scanners do not flag this
file; none of them is a live credential.
"""

from __future__ import annotations

import time

import pytest

from s3memory.core import guard
from s3memory.core.guard import REDACTED, Finding, SecretGuard, find_secrets
from s3memory.errors import CommandError
from tests.support import err, ok

PATH = "/memories/notes.md"

# (kind, text before the secret, the secret itself, text after it). Redaction keeps the text around.
CASES = [
    ("AWS access key id", "key: ", "AKIA" + "IOSFODNN7EXAMPLE", ""),
    ("AWS access key id", "", "ASIA" + "Y34FZKBOKMUTVV7A", " (session)"),
    ("AWS secret access key", "aws_secret_access_key = ", "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY", ""),
    ("AWS secret access key", '{"SecretAccessKey": "', "je7MtGbClwBF/2Zp9Utk/" + "h3yCo8nvbEXAMPLEKEY", '"}'),
    ("AWS secret access key", "AWS_SECRET_ACCESS_KEY=", "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY", "\n"),
    (
        "PEM private key",
        "deploy key:\n",
        "-----BEGIN RSA " + "PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7\n"
        "-----END RSA " + "PRIVATE KEY-----",
        "\nend",
    ),
    ("PEM private key", "", "-----BEGIN " + "PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIC\n-----END PRIVATE KEY-----", ""),
    ("PEM private key", "", "-----BEGIN OPENSSH " + "PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n", ""),  # cut off
    (
        "PEM private key",
        "",
        "-----BEGIN ENCRYPTED " + "PRIVATE KEY-----\nMIIFHzBJBgkq\n-----END ENCRYPTED PRIVATE KEY-----",
        "",
    ),
    ("PEM private key", "", "-----BEGIN EC " + "PRIVATE KEY-----\nMHcCAQEEIB\n-----END EC PRIVATE KEY-----", ""),
    (
        "PGP private key",
        "",
        "-----BEGIN PGP " + "PRIVATE KEY BLOCK-----\nlQOYBF\n-----END PGP PRIVATE KEY BLOCK-----",
        "",
    ),
    (
        "JSON web token",
        "cookie=",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
        + "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ."
        + "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
        "; path=/",
    ),
    ("bearer token", "Authorization: Bearer ", "ya29.a0AfH6SMBx3kLp9zQ1rT7uV2wX4yZ", ""),
    ("bearer token", "curl -H 'authorization: bearer ", "QWxhZGRpbjpPcGVuU2VzYW1lQWxhZGRpbg", "'"),
    ("basic auth credentials", "Authorization: Basic ", "QWxhZGRpbjpvcGVuIHNlc2FtZQ==", ""),
    ("password in a URL", "DATABASE_URL=postgres://admin:", "s3cr3t-Passw0rd", "@db.internal:5432/app"),
    ("Anthropic API key", "ANTHROPIC_API_KEY=", "sk-ant-" + "api03-Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0L", ""),
    ("OpenAI API key", "", "sk-proj-" + "Ab12Cd34" + "T3BlbkFJ" + "Ef56Gh78Ij90Kl12", ""),
    ("Stripe secret key", "stripe: ", "sk_" + "live_" + "4eC39HqLyjWDarjtT1zdp7dc", ""),
    ("GitHub token", "GH_TOKEN=", "ghp_" + "1234567890abcdefghijABCDEFGHIJ123456", ""),
    ("Slack token", "", "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", ""),
    ("Google API key", "maps key ", "AIza" + "SyA-1234567890abcdefghijklmnopqrstu", "."),
    ("payment card number", "Visa ", "4111 1111 1111 1111", " exp 12/26"),
    ("payment card number", "card: ", "4111-1111-1111-1111", ""),
    ("payment card number", "cc ", "4111111111111111", " 123"),  # a CVV right after
    ("payment card number", "MC ", "5555555555554444", ""),
    ("payment card number", "2-series MC ", "2223003122003222", ""),
    ("payment card number", "Amex ", "3782 822463 10005", ""),
    ("payment card number", "Amex ", "378282246310005", ""),
    ("payment card number", "Discover ", "6011111111111117", ""),
    ("payment card number", "JCB ", "3530111333300000", ""),
    ("payment card number", "Diners ", "30569309025904", ""),
    ("payment card number", "UnionPay ", "6200000000000005", ""),
    ("payment card number", "call +1 415 555 2671 re ", "4242 4242 4242 4242", " 04/27"),
    ("password in a URL", "REDIS_URL=redis://:", "s3cr3t-Passw0rd", "@cache.internal:6379/0"),  # no user
    ("password in a URL", "broker amqp+ssl://:", "Zq9:xY!w8v", "@mq.internal"),
    ("AWS secret access key", "aws_secret_key = ", "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY", ""),
    ("AWS secret access key", "AWS_SECRET_KEY=", "je7MtGbClwBF/2Zp9Utk/" + "h3yCo8nvbEXAMPLEKEY", "\n"),
    ("payment card number", "Card number on file:\n", "4539148803436467", ""),
    ("payment card number", "creditCard=", "5425233430109903", ";"),
    ("payment card number", "exp 12/26, PAN ", "6011000990139424", ""),
]
IDS = [f"{kind}-{i}" for i, (kind, *_) in enumerate(CASES)]


def article(kind: str) -> str:
    return ("an " if kind[0] in "AEIOUaeiou" else "a ") + kind


def blocked(kind: str, line: int, path: str = PATH) -> str:
    return (
        f"Error: Cannot write {path}: the content contains what looks like {article(kind)} on line {line}. "
        "Secrets must not be stored in memory; remove it and try again. Nothing was changed."
    )


@pytest.mark.parametrize(("kind", "before", "secret", "after"), CASES, ids=IDS)
def test_block_names_the_kind_and_line_but_not_the_secret(kind, before, secret, after):
    text = "# notes\nall fine here\n" + before + secret + after
    line = 3 + before.count("\n")
    with pytest.raises(CommandError) as caught:
        SecretGuard().scan(text, PATH)
    assert caught.value.message == blocked(kind, line)
    assert secret not in caught.value.message
    assert secret.split("\n")[0][-12:] not in caught.value.message  # not even a tail of it


@pytest.mark.parametrize(("kind", "before", "secret", "after"), CASES, ids=IDS)
def test_redact_replaces_exactly_the_secret(kind, before, secret, after):
    text = "intro\n" + before + secret + after
    assert SecretGuard("redact").scan(text, PATH) == "intro\n" + before + REDACTED.format(kind=kind) + after


@pytest.mark.parametrize(("kind", "before", "secret", "after"), CASES, ids=IDS)
def test_off_writes_everything(kind, before, secret, after):
    text = before + secret + after
    assert SecretGuard("off").scan(text, PATH) == text


NOT_SECRETS = [
    "commit e83c5163316f89bfbde7d9ab23ca2e25604af290 and its short form e83c516",
    "sha with digits inside: ab4111111111111111cd0123456789abcdef012345",
    "uuid 123e4567-e89b-12d3-a456-426614174000 and 12345678-1234-1234-1234-123456789012",
    "Luhn fails: 4111 1111 1111 1112 and 4111111111111112 and 5555555555554445",
    "Luhn passes but no card network: 1000000000000008, 9999999999999995 and 79927398713",
    "all one digit: 0000000000000000 and 4444 4444 4444 4444",
    "mixed separators: 4111-1111 1111-1111",
    "epoch ms 1700000000000, epoch ns 1731234567890123456, id 20240115123456789",
    "numbers 42, 3.14159265358979, 0.4111111111111111, 1,234,567.89 and 100000000000000000000",
    "dates 2024-01-15, 2024-01-15T10:30:00Z, 15/01/2024, 12/26",
    "phones +1 (415) 555-2671, 415-555-2671, +44 20 7183 8750, +1 415 555 2671, 0044 20 7183 8750",
    "ISBN 978-3-16-148410-0, IP 192.168.100.200, version v4.111.1111.1111",
    "scores: 1 2 3 4 5 6 7 8 9 1 2 3 4 5 6 7 8 9",
    "| 2021 | 2022 | 2023 | 2024 |\n| 1500 | 1600 | 1700 | 1800 |",
    "a 40-char base64 blob dGhpcyBpcyBhIHRlc3Qgc3RyaW5nIGZvciBiYXNl with no label",
    "hex 0123456789abcdef0123456789abcdef01234567",
    "The bearer of this letter is trusted; bearer bonds; ring-bearer duties-and-responsibilities-listed",
    "Send the header as `Authorization: Bearer <token>` with your own token.",
    "access keys look like AKIA followed by 16 characters; secrets are 40 characters",
    "my secret recipe: secret_access_key is a config field name",
    "https://example.com/a?b=1, https://user@example.com/x, http://localhost:8080/p, mailto:x@example.com",
    "a JWT header alone: eyJhbGciOiJIUzI1NiJ9",
    "scikit: sk-learn; sk-ant is short; ghp_short; xoxb-1; AIzaShort",
    "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
    "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----",
]


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_ordinary_content_is_not_a_secret(text):
    assert find_secrets(text) == []
    assert SecretGuard().scan(text, PATH) == text


def test_first_secret_in_the_text_is_named_when_there_are_several():
    text = "a\nb\ncard 4111111111111111\nkey " + "AKIA" + "IOSFODNN7EXAMPLE\n"
    with pytest.raises(CommandError) as caught:
        SecretGuard().scan(text, PATH)
    assert caught.value.message == blocked("payment card number", 3)
    assert SecretGuard("redact").scan(text, PATH) == (
        "a\nb\ncard [REDACTED payment card number]\nkey [REDACTED AWS access key id]\n"
    )
    assert [(f.kind, f.line) for f in find_secrets(text)] == [("payment card number", 3), ("AWS access key id", 4)]


def test_a_jwt_after_bearer_is_one_secret():
    jwt = "eyJhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiIxMjM0NTY3ODkwIn0." + "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
    assert SecretGuard("redact").scan("Authorization: Bearer " + jwt, PATH) == (
        "Authorization: Bearer [REDACTED JSON web token]"
    )


# A bearer token whose body holds an AWS access key id, and one that runs into a grouped card.
OVERLAPS = [
    ("Authorization: Bearer ", "AKIA" + "IOSFODNN7EXAMPLE" + ".tailZq9xYw8v", " sent"),
    ("Authorization: Bearer ", "Zq9xYw8vUt7sRr6pQo5n-4111 1111 1111 1111", " sent"),
]


@pytest.mark.parametrize(("before", "secret", "after"), OVERLAPS, ids=["aws-key-in-bearer", "bearer-into-card"])
def test_redact_covers_the_union_of_overlapping_secrets(before, secret, after):
    text = "intro\n" + before + secret + after
    assert SecretGuard("redact").scan(text, PATH) == "intro\n" + before + "[REDACTED bearer token]" + after
    start = len("intro\n" + before)
    assert find_secrets(text) == [Finding("bearer token", 2, start, start + len(secret))]
    with pytest.raises(CommandError) as caught:
        SecretGuard().scan(text, PATH)
    assert caught.value.message == blocked("bearer token", 2)


def test_overlapping_and_touching_findings_merge_under_the_first_kind():
    findings = [
        Finding("a", 0, 0, 10),
        Finding("b", 0, 0, 4),  # inside a
        Finding("c", 0, 5, 15),  # overlaps a and goes past it
        Finding("d", 0, 15, 20),  # touches c
        Finding("e", 0, 21, 30),  # one character apart: separate
    ]
    assert guard.merge_overlaps(findings) == [Finding("a", 0, 0, 20), Finding("e", 0, 21, 30)]
    assert guard.merge_overlaps([]) == []


# Order numbers and other identifiers that start with a card prefix and pass the Luhn check.
NOT_CARDS = [
    "Order 4539148803436467 shipped",
    "tracking 4111111111111111 delivered",
    "invoice #5425233430109903 paid",
    "discard 4111111111111111, expected 5555555555554444, panel 6011000990139424",
    "the card on file is fine; order number: 4111111111111111",  # the card word is 36 characters back
]


@pytest.mark.parametrize("text", NOT_CARDS)
def test_an_unbroken_digit_run_is_a_card_only_after_a_card_word(text):
    assert find_secrets(text) == []
    assert SecretGuard("redact").scan(text, PATH) == text


CARD_WORDS = ["card: ", "Credit card number ", "DEBIT ", "visa ", "Mastercard ", "AMEX ", "cc#", "CVV 123 ", "pan="]


@pytest.mark.parametrize("word", CARD_WORDS)
def test_a_card_word_before_an_unbroken_digit_run_makes_it_a_card(word):
    text = f"paid with {word}4111111111111111 today"
    assert SecretGuard("redact").scan(text, PATH) == f"paid with {word}[REDACTED payment card number] today"


@pytest.mark.parametrize("card", ["4111 1111 1111 1111", "4111-1111-1111-1111", "3782 822463 10005"])
def test_a_card_grouped_like_one_needs_no_card_word(card):
    assert SecretGuard("redact").scan(f"Order {card} shipped", PATH) == "Order [REDACTED payment card number] shipped"


def test_the_card_word_must_start_within_32_characters_before_the_digits():
    near = "cc" + " " * 30 + "4111111111111111"  # "cc" starts 32 characters before the digits
    assert [(f.kind, f.start, f.end) for f in find_secrets(near)] == [("payment card number", 32, 48)]
    assert find_secrets("cc" + " " * 31 + "4111111111111111") == []


def test_invalid_mode_is_refused():
    with pytest.raises(ValueError, match='guard mode must be "block", "redact" or "off"'):
        SecretGuard("warn")  # type: ignore[arg-type]


def test_scanning_is_linear_on_adversarial_input():
    """Quadratic backtracking would take minutes on these; a linear scan takes well under a second each."""
    size = 256 * 1024
    hostile = [
        "a." * (size // 2),
        "eyJ-" * (size // 4),
        "sk-ant-" * (size // 7),
        "xoxb-" * (size // 5),
        "1 " * (size // 2),
        "4111 " * (size // 5),
        "1234-" * (size // 5),
        "-----BEGIN A " * (size // 13),
        "x://a:" * (size // 6),
        "eyJaaaaaaaaa." * (size // 13),
        "bearer " * (size // 7),
    ]
    started = time.perf_counter()
    for text in hostile:
        find_secrets(text)
    assert time.perf_counter() - started < 20.0


# --- through the tool ------------------------------------------------------------------

AWS_KEY = "AKIA" + "IOSFODNN7EXAMPLE"
CARD = "4111 1111 1111 1111"


def test_create_is_refused_and_nothing_is_written(tool):
    message = err(tool, command="create", path=PATH, file_text=f"ok\nok\nexport AWS_ACCESS_KEY_ID={AWS_KEY}\n")
    assert message == blocked("AWS access key id", 3)
    assert AWS_KEY not in message
    assert err(tool, command="view", path=PATH) == f"The path {PATH} does not exist. Please provide a valid path."


def test_str_replace_scans_the_resulting_content(tool):
    ok(tool, command="create", path=PATH, file_text="one\ntwo\nthree\n")
    assert err(tool, command="str_replace", path=PATH, old_str="two", new_str=f"card {CARD}") == blocked(
        "payment card number", 2
    )
    assert ok(tool, command="view", path=PATH) == (
        f"Here's the content of {PATH} with line numbers:\n     1\tone\n     2\ttwo\n     3\tthree"
    )


def test_insert_scans_the_resulting_content(tool):
    ok(tool, command="create", path=PATH, file_text="one\ntwo\n")
    token = "ghp_" + "1234567890abcdefghijABCDEFGHIJ123456"
    assert err(tool, command="insert", path=PATH, insert_line=1, insert_text=f"GH_TOKEN={token}") == blocked(
        "GitHub token", 2
    )
    assert (
        ok(tool, command="view", path=PATH)
        == f"Here's the content of {PATH} with line numbers:\n     1\tone\n     2\ttwo"
    )


def test_redact_mode_through_every_write(make_tool):
    tool = make_tool(guard="redact")
    assert (
        ok(tool, command="create", path=PATH, file_text=f"ref {AWS_KEY}\n") == f"File created successfully at: {PATH}"
    )
    assert ok(tool, command="str_replace", path=PATH, old_str="ref", new_str=f"card {CARD} ref") == (
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
        "     1\tcard [REDACTED payment card number] ref [REDACTED AWS access key id]"
    )
    jwt = "eyJhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiIxMjM0NTY3ODkwIn0." + "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
    assert ok(tool, command="insert", path=PATH, insert_line=0, insert_text=jwt) == f"The file {PATH} has been edited."
    assert ok(tool, command="view", path=PATH) == (
        f"Here's the content of {PATH} with line numbers:\n"
        "     1\t[REDACTED JSON web token]\n"
        "     2\tcard [REDACTED payment card number] ref [REDACTED AWS access key id]"
    )


def test_redacted_edit_snippet_shows_what_was_stored(make_tool):
    """The success snippet is cut from the stored (redacted) text, even when redaction removed lines."""
    tool = make_tool(guard="redact")
    ok(tool, command="create", path=PATH, file_text="a\nb\nc\n")
    pem = "-----BEGIN " + "PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIC\n-----END PRIVATE KEY-----"
    assert ok(tool, command="str_replace", path=PATH, old_str="b", new_str=pem) == (
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
        "     1\ta\n     2\t[REDACTED PEM private key]\n     3\tc"
    )
    assert ok(tool, command="view", path=PATH) == (
        f"Here's the content of {PATH} with line numbers:\n     1\ta\n     2\t[REDACTED PEM private key]\n     3\tc"
    )


def test_off_mode_stores_as_is(make_tool):
    tool = make_tool(guard="off")
    ok(tool, command="create", path=PATH, file_text=f"id {AWS_KEY}\n")
    assert (
        ok(tool, command="view", path=PATH) == f"Here's the content of {PATH} with line numbers:\n     1\tid {AWS_KEY}"
    )


def test_an_old_secret_blocks_edits_until_removed_and_redact_cleans_it(make_tool):
    ok(make_tool(guard="off"), command="create", path=PATH, file_text=f"a\nkey {AWS_KEY}\n")
    blocking = make_tool()
    assert err(blocking, command="insert", path=PATH, insert_line=0, insert_text="new") == blocked(
        "AWS access key id", 3
    )
    assert ok(blocking, command="str_replace", path=PATH, old_str=f"key {AWS_KEY}", new_str="key removed").startswith(
        "The memory file has been edited."
    )
    ok(make_tool(guard="off"), command="create", path="/memories/other.md", file_text=f"{CARD}\n")
    redacting = make_tool(guard="redact")
    ok(redacting, command="insert", path="/memories/other.md", insert_line=1, insert_text="more")
    assert ok(redacting, command="view", path="/memories/other.md") == (
        "Here's the content of /memories/other.md with line numbers:\n"
        "     1\t[REDACTED payment card number]\n     2\tmore"
    )


PATH_BLOCKED = (
    "Error: Cannot write to this path: its name contains what looks like an AWS access key id. "
    "Secrets must not be stored in memory, not even in file names; choose another name. Nothing was changed."
)


@pytest.mark.parametrize("mode", ["block", "redact"])
def test_a_secret_in_a_path_is_refused_without_echoing_it(make_tool, mode):
    tool = make_tool(guard=mode)
    message = err(tool, command="create", path=f"/memories/{AWS_KEY}.txt", file_text="x")
    assert message == PATH_BLOCKED
    ok(tool, command="create", path="/memories/keys/a.txt", file_text="x")
    assert err(tool, command="rename", old_path="/memories/keys/a.txt", new_path=f"/memories/keys/{AWS_KEY}") == (
        PATH_BLOCKED
    )
    assert err(tool, command="rename", old_path="/memories/keys", new_path=f"/memories/{AWS_KEY}") == PATH_BLOCKED
    assert ok(tool, command="view", path="/memories") == (
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n"
        "4.0K\t/memories\n4.0K\t/memories/keys/\n1B\t/memories/keys/a.txt"
    )


def test_a_custom_guard_is_called_with_the_content_and_path(make_tool, counter):
    seen: list[tuple[str, str]] = []

    class Shouting:
        def scan(self, text: str, display: str) -> str:
            seen.append((text, display))
            if "forbidden" in text:
                raise CommandError("Error: house rules forbid that word")
            return text.upper()

    tool = make_tool(guard=Shouting())
    ok(tool, command="create", path=PATH, file_text="hello\n")
    ok(tool, command="insert", path=PATH, insert_line=1, insert_text="world")
    assert err(tool, command="str_replace", path=PATH, old_str="WORLD", new_str="forbidden") == (
        "Error: house rules forbid that word"
    )
    assert seen == [("hello\n", PATH), ("HELLO\nworld\n", PATH), ("HELLO\nforbidden\n", PATH)]
    assert (
        ok(tool, command="view", path=PATH)
        == f"Here's the content of {PATH} with line numbers:\n     1\tHELLO\n     2\tWORLD"
    )


@pytest.mark.parametrize(
    "text",
    [
        "4111111111111111 exp 12/26",
        "4111111111111111, expiry 12/26",
        "4111111111111111 CVV 123",
        "5500005555555559 valid thru 01/27",
    ],
)
def test_an_unbroken_card_followed_by_its_expiry_or_code_is_found(text: str) -> None:
    assert [f.kind for f in find_secrets(text)] == ["payment card number"]


@pytest.mark.parametrize("text", ["Order 4539148803436467 shipped, expected Monday", "ref 4111111111111111 explained"])
def test_words_after_an_order_number_that_merely_start_like_expiry_do_not_count(text: str) -> None:
    assert find_secrets(text) == []
