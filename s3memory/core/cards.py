"""Payment card numbers, as the secret guard finds them. Pure.

A card number must start with a card network's prefix, have that network's length and pass the
Luhn check. It must also look like a card: grouped in a card layout (4111 1111 1111 1111,
3782 822463 10005), or, written as one unbroken run of digits, next to a card word ("card",
"Visa", "cc" before it; "exp", "cvv" after it), so order numbers and other long identifiers
that pass Luhn by chance are left alone. Constant work per digit group (linear in the text).
"""

from __future__ import annotations

import re

_DOUBLED = str.maketrans("0123456789", "0246813579")  # each digit doubled, digit sum of the result


def luhn_ok(digits: str) -> bool:
    """The Luhn check (ASCII digits only); sums bytes in C, so a 1 MiB file of digits stays fast."""
    reverse = digits[::-1]
    total = sum(reverse[0::2].encode()) + sum(reverse[1::2].translate(_DOUBLED).encode()) - 48 * len(digits)
    return total % 10 == 0


def card_network_ok(digits: str) -> bool:
    """True if the prefix (IIN) and length are those of a major card network."""
    n = len(digits)
    p2, p3, p4, p6 = int(digits[:2]), int(digits[:3]), int(digits[:4]), int(digits[:6])
    return (
        (digits[0] == "4" and n in (13, 16, 19))  # Visa
        or ((51 <= p2 <= 55 or 2221 <= p4 <= 2720) and n == 16)  # Mastercard
        or (p2 in (34, 37) and n == 15)  # American Express
        or ((300 <= p3 <= 305 or p2 in (36, 38, 39) or p4 == 3095) and 14 <= n <= 19)  # Diners Club
        or (3528 <= p4 <= 3589 and 16 <= n <= 19)  # JCB
        or ((p4 == 6011 or p2 in (62, 65) or 644 <= p3 <= 649 or 622126 <= p6 <= 622925) and 16 <= n <= 19)
        or ((p2 == 50 or 56 <= p2 <= 69) and 13 <= n <= 19)  # Maestro
    )


# Card numbers as people write them: one run of 13-19 digits, or groups of four (Visa,
# Mastercard, Discover, ...) or 4-6-5 / 4-6-4 (Amex, Diners), with one consistent separator.
# Grouped layouts, longest first (a card may be followed by an expiry or a CVV).
_CARD_LAYOUTS = {  # group lengths, by the length of the second group
    "4": ("44443", "4444", "4443", "4442", "4441"),
    "6": ("465", "464"),
}
# A run of digit groups separated by single spaces or hyphens, not inside a word, a decimal
# number or a date (so git SHAs, UUIDs, version strings and amounts are never candidates).
DIGIT_RUN = re.compile(r"(?<![0-9A-Za-z_.,/])[0-9]+(?:[ -][0-9]+)*(?![0-9A-Za-z_])")
_DIGITS = re.compile(r"[0-9]+")
# Words that make an unbroken run of digits a card number when one starts within
# _CONTEXT_WINDOW characters before it. A word must not follow a letter or run on into a
# lower-case one ("discard", "expected" and "panel" do not count; "cardNumber" and "CC#" do).
_CONTEXT_WINDOW = 32
_CARD_CONTEXT = re.compile(
    r"(?<![A-Za-z])(?i:cards?|cardholder|credit|debit|visa|master ?card|mc|amex|american express|discover"
    r"|diners|jcb|union ?pay|maestro|cc|cvv2?|cvc2?|exp|expiry|expires|expiration|pan)(?![a-z])"
)

# After an unbroken run, only the words that follow a card number on a card: expiry and code.
_CARD_TRAILER = re.compile(r"(?<![A-Za-z])(?i:exp|expiry|expires|expiration|valid thru|cvv2?|cvc2?)(?![a-z])")


def is_card_number(digits: str) -> bool:
    return len(set(digits)) > 1 and card_network_ok(digits) and luhn_ok(digits)


def has_card_context(text: str, start: int, end: int | None = None) -> bool:
    """True if a card word appears in the few characters before `text[start]`, or an expiry or
    security-code word (exp, expiry, cvv, cvc, ...) in the few after `text[end]`."""
    if _CARD_CONTEXT.search(text, max(0, start - _CONTEXT_WINDOW), start) is not None:
        return True
    return end is not None and _CARD_TRAILER.search(text, end, end + _CONTEXT_WINDOW) is not None


def card_spans(run: re.Match[str]) -> list[tuple[int, int]]:
    """Card numbers inside a run of digit groups; constant work per group."""
    text, base = run.group(0), run.start()
    groups = [g.span() for g in _DIGITS.finditer(text)]
    n = len(groups)
    lengths = [end - start for start, end in groups]
    shape = "".join(str(length) if length < 10 else "+" for length in lengths)  # "4444" for 4111 1111 1111 1111
    digits = "".join(text[start:end] for start, end in groups)
    offsets = [0]
    for length in lengths:
        offsets.append(offsets[-1] + length)
    # same[k]: how many separators from the one after group k on are equal to it ("4111 1111-..." mixes).
    same = [1] * max(0, n - 1)
    for k in range(n - 3, -1, -1):
        if text[groups[k][1]] == text[groups[k + 1][1]]:
            same[k] = same[k + 1] + 1
    spans: list[tuple[int, int]] = []
    i = 0
    while i < n:
        last = -1
        if 13 <= lengths[i] <= 19:  # unbroken: a card only next to a card word
            number = digits[offsets[i] : offsets[i + 1]]
            if is_card_number(number) and has_card_context(run.string, base + groups[i][0], base + groups[i][1]):
                last = i
        elif lengths[i] == 4 and i + 2 < n and same[i] >= 2:
            for layout in _CARD_LAYOUTS.get(shape[i + 1], ()):
                j = i + len(layout) - 1
                if (
                    shape.startswith(layout, i)
                    and same[i] >= len(layout) - 1
                    and is_card_number(digits[offsets[i] : offsets[j + 1]])
                ):
                    last = j
                    break
        if last < 0:
            i += 1
            continue
        spans.append((base + groups[i][0], base + groups[last][1]))
        i = last + 1
    return spans
