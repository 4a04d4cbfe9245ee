"""False-positive and miss rates of the payment-card detector, on deterministic samples.

    .venv/bin/python bench/guard_rates.py                           # the guard in this tree
    .venv/bin/python bench/guard_rates.py --module /tmp/guard.py    # another guard.py (e.g. before a change)

False positives: 16-digit order numbers that start with a card network's prefix, once all
Luhn-valid (the ones a prefix-and-Luhn check cannot tell from a card) and once random. Misses:
Luhn-valid numbers with real network prefixes, written as people write cards. Every sample set
has its own seeded `random.Random`, so each run prints the same numbers for the same guard.
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parent.parent

# Real networks: (prefixes, length). A sample picks a network, then one of its prefixes.
NETWORKS: tuple[tuple[tuple[str, ...], int], ...] = (
    (("4",), 16),  # Visa
    (tuple(str(p) for p in range(51, 56)), 16),  # Mastercard
    (tuple(str(p) for p in range(2221, 2721)), 16),  # Mastercard 2-series
    (("34", "37"), 15),  # American Express
    (("6011", "65"), 16),  # Discover
    (tuple(str(p) for p in range(3528, 3590)), 16),  # JCB
)
ORDER_NETWORKS = tuple(network for network in NETWORKS if network[1] == 16)
ORDER_TEXTS = (
    "Order {n} shipped",
    "order id {n}",
    "Invoice {n} paid on 2024-03-01",
    "tracking number {n}",
    "ref {n} (customer 8812)",
    "shipment {n} left the warehouse",
)
GROUPED_TEXTS = ("{c}", "Charge {c} for the renewal", "number {c}, expires 04/27", "on file: {c}")
CARD_WORD_TEXTS = ("card: {c}", "Visa {c}", "credit card {c}", "cc {c} exp 04/27", "Card number:\n{c}")
NO_WORD_TEXTS = ("{c}", "Charge {c} for the renewal", "on file: {c}")
SAMPLES = 10_000


def load_guard(path: str | None) -> ModuleType:
    """The guard module in this tree, or the guard.py at `path` (loaded under its own name)."""
    if path is None:
        sys.path.insert(0, str(REPO))
        import s3memory.core.guard as current

        return current
    spec = importlib.util.spec_from_file_location("guard_under_test", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the file runs
    spec.loader.exec_module(module)
    return module


def luhn_digit(body: str) -> str:
    """The check digit that makes `body + digit` pass the Luhn check."""
    total = 0
    for i, ch in enumerate(reversed(body)):
        d = int(ch) * (2 if i % 2 == 0 else 1)
        total += d - 9 if d > 9 else d
    return str(-total % 10)


def fill(rng: random.Random, prefix: str, length: int) -> str:
    return prefix + "".join(rng.choice("0123456789") for _ in range(length - len(prefix)))


def pick(rng: random.Random, networks: tuple[tuple[tuple[str, ...], int], ...]) -> tuple[str, int]:
    prefixes, length = rng.choice(networks)
    return rng.choice(prefixes), length


def order_number(rng: random.Random, luhn: bool) -> str:
    prefix, _ = pick(rng, ORDER_NETWORKS)
    if not luhn:
        return fill(rng, prefix, 16)
    body = fill(rng, prefix, 15)
    return body + luhn_digit(body)


def card_number(rng: random.Random) -> str:
    prefix, length = pick(rng, NETWORKS)
    body = fill(rng, prefix, length - 1)
    return body + luhn_digit(body)


def grouped(rng: random.Random, number: str) -> str:
    sizes = (4, 6, 5) if len(number) == 15 else (4, 4, 4, 4)
    parts, pos = [], 0
    for size in sizes:
        parts.append(number[pos : pos + size])
        pos += size
    return rng.choice(" -").join(parts)


def flagged(guard: ModuleType, text: str) -> bool:
    return bool(guard.find_secrets(text))


def found(guard: ModuleType, text: str, card: str) -> bool:
    """True if one finding covers the whole card as written."""
    start = text.index(card)
    return any(f.start <= start and start + len(card) <= f.end for f in guard.find_secrets(text))


def false_positive_rate(guard: ModuleType, seed: int, luhn: bool) -> int:
    rng = random.Random(seed)
    hits = 0
    for _ in range(SAMPLES):
        text = rng.choice(ORDER_TEXTS).format(n=order_number(rng, luhn))
        hits += flagged(guard, text)
    return hits


def miss_count(guard: ModuleType, seed: int, write: Callable[[random.Random, str], str], texts: tuple[str, ...]) -> int:
    rng = random.Random(seed)
    misses = 0
    for _ in range(SAMPLES):
        card = write(rng, card_number(rng))
        misses += not found(guard, rng.choice(texts).format(c=card), card)
    return misses


def line(label: str, count: int, what: str) -> str:
    return f"  {label:<40} {count:>6} of {SAMPLES:,} {what} ({100 * count / SAMPLES:.2f}%)"


def report(guard: ModuleType) -> list[str]:
    def bare(_rng: random.Random, number: str) -> str:
        return number

    return [
        f"guard: {guard.__file__}",
        "false positives (16-digit order numbers with a card prefix, e.g. 'Order 4539... shipped')",
        line("Luhn-valid order numbers", false_positive_rate(guard, 1, luhn=True), "flagged"),
        line("random order numbers (any Luhn)", false_positive_rate(guard, 2, luhn=False), "flagged"),
        "misses (valid Luhn, real network prefixes)",
        line("grouped (4-4-4-4 / 4-6-5, space or dash)", miss_count(guard, 3, grouped, GROUPED_TEXTS), "missed"),
        line("unbroken, after a card word", miss_count(guard, 4, bare, CARD_WORD_TEXTS), "missed"),
        line("unbroken, no card word (not a goal)", miss_count(guard, 5, bare, NO_WORD_TEXTS), "missed"),
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--module", metavar="PATH", help="a guard.py to measure instead of s3memory.core.guard")
    args = parser.parse_args(argv)
    print("\n".join(report(load_guard(args.module))))


if __name__ == "__main__":
    main()
