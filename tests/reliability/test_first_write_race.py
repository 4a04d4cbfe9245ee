"""Issue 26: concurrent first writes of a new agent with hidden names converge with at most one
wasted key per racing process, and the race's S3 requests are pinned.

The interleaving is forced, so the counts are exact by construction: every racer claims generation 1
at the same moment (one wins, the others each waste the key they made); the losers list the keystore
only once the winner has written generation 1's index entry, and the winner claims the name key only
once every loser has listed (so none of them sees it yet and each must wait for it rather than make
one of its own); a loser's next listing waits for the winner's name key. The rate under real
contention is a benchmark's business, not a test's."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

from s3memory import LocalKeys, S3MemoryTool
from tests.support import LOCAL_KEY, keystore_names, listed_keys

RACERS = 30  # as in issue 26's measurement (38 keys and 123 requests wasted before)
AGENT = "racing"
FOLDER = f"agents/{AGENT}/.s3memory/keys/"
WAIT = 20.0  # a deadlock fails the test instead of hanging it


class CountingKeys(LocalKeys):
    """The local test key, counting the branch keys it generates (a KMS GenerateDataKey each)."""

    generated = 0
    lock = threading.Lock()

    def _generate_branch(self, agent_id: str, branch_id: str) -> tuple[bytes, bytes]:
        with CountingKeys.lock:
            CountingKeys.generated += 1
        return super()._generate_branch(agent_id, branch_id)


class Interleaving:
    """botocore hooks on the racers' shared S3 client that force the order described above and count
    each request by operation (and the conditional claims by outcome)."""

    def __init__(self, s3: Any) -> None:
        self.lock = threading.Lock()
        self.requests: Counter[str] = Counter()
        self.claims: Counter[str] = Counter()  # "00000001 200", "00000001 412", ...
        self.at_claim = threading.Barrier(RACERS, timeout=WAIT)
        self.first_indexed = threading.Event()  # the winner wrote generation 1's index entry
        self.losers_listed = threading.Event()  # every loser listed the keystore after losing
        self.name_key_done = threading.Event()  # the winner wrote the name key's index entry
        self.state: dict[int, str] = {}  # thread id -> "lost", "listed", "waited"
        self.listed = 0
        events = s3.meta.events
        events.register("before-parameter-build.s3.*", self._remember)
        events.register("before-call.s3.*", self._before)
        events.register("after-call.s3.*", self._after)

    @staticmethod
    def _remember(params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        context["race_key"] = params.get("Key") or params.get("Prefix") or ""

    def _before(self, model: Any, context: dict[str, Any], **_: Any) -> None:
        key, me = context.get("race_key", ""), threading.get_ident()
        with self.lock:
            self.requests[f"s3:{model.name}"] += 1
        if model.name == "PutObject" and key == FOLDER + "00000001":
            self.at_claim.wait()  # every racer claims generation 1 at once
        elif model.name == "PutObject" and key == FOLDER + "00000000":
            assert self.losers_listed.wait(WAIT)  # the winner's name key: after every loser listed
        elif model.name == "ListObjectsV2" and self.state.get(me) == "lost":
            assert self.first_indexed.wait(WAIT)
        elif model.name == "ListObjectsV2" and self.state.get(me) == "listed":
            assert self.name_key_done.wait(WAIT)
            self.state[me] = "waited"

    def _after(self, model: Any, context: dict[str, Any], http_response: Any, **_: Any) -> None:
        key, me = context.get("race_key", ""), threading.get_ident()
        status = http_response.status_code
        if model.name == "PutObject" and key.startswith(FOLDER):
            name = key[len(FOLDER) :]
            if name in ("00000000", "00000001"):
                with self.lock:
                    self.claims[f"{name} {status}"] += 1
            if name == "00000001" and status == 412:
                self.state[me] = "lost"
            elif name.startswith("00000001-"):
                self.first_indexed.set()
            elif name.startswith("00000000-"):
                self.name_key_done.set()
        elif model.name == "ListObjectsV2" and self.state.get(me) == "lost":
            self.state[me] = "listed"
            with self.lock:
                self.listed += 1
                if self.listed == RACERS - 1:
                    self.losers_listed.set()


def test_racing_first_writes_with_hidden_names_waste_one_key_per_loser(
    make_tool: Callable[..., S3MemoryTool], s3: Any
) -> None:
    CountingKeys.generated = 0
    tools = [make_tool(AGENT, names="encrypted", keys=CountingKeys(LOCAL_KEY)) for _ in range(RACERS)]
    race = Interleaving(s3)
    results: dict[int, str] = {}

    def first_write(i: int) -> None:
        results[i] = str(tools[i].call({"command": "create", "path": f"/memories/from-{i}.md", "file_text": "x"}))

    threads = [threading.Thread(target=first_write, args=(i,)) for i in range(RACERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {i: f"File created successfully at: /memories/from-{i}.md" for i in range(RACERS)}
    requests = dict(race.requests)  # before this test's own listing below
    # One generation 1 and one name key in the keystore; each loser wasted the one key it made.
    names = keystore_names(listed_keys(s3), f"agents/{AGENT}/")
    assert [n for n in names if not n.startswith("names.")][::2] == ["00000000", "00000001"]
    assert race.claims == {"00000001 200": 1, "00000001 412": RACERS - 1, "00000000 200": 1}
    assert CountingKeys.generated == RACERS + 1  # RACERS - 1 wasted: at most one per racing process
    # The winner: two listings of the new agent, generation 1 (claim, mode entry, index entry), the
    # name key (claim, index entry), its file's directory listing and its file. Each loser: the same
    # two listings and its lost claim, one keystore listing after losing and one after waiting for the
    # name key (instead of a name key of its own), then its directory listing and its file.
    losers = RACERS - 1
    assert requests == {"s3:ListObjectsV2": 3 + 5 * losers, "s3:PutObject": 6 + 2 * losers}
