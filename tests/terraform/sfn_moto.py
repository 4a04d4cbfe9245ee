"""Run the fleet state machine the module renders on moto's Step Functions interpreter.

moto 5.2.5 executes a Distributed Map (`mock_aws(config={"stepfunctions": {"execute_state_machine":
True}})`): its ItemReader (S3 getObject, InputType JSON), MaxConcurrencyPath, Choice and Pass
states, Retry (with backoff and jitter), the Lambda task integration and a ResultWriter. Three
seams, each as small as it can be:

* **Lambda**: moto would start a container for an invocation; `LambdaFunction._invoke_lambda` (the
  one method that does) is replaced by a call of the worker handler in this process, the way the
  Python runtime calls it: the event as parsed JSON, an error as `{"errorType", "errorMessage"}`
  with the function error flag, which the interpreter turns into the error name Retry matches.
  Everything before (the task's parameters, the Lambda API call, the function lookup) and after
  (payload, error mapping, ResultSelector) is moto's.
* **Retry waits**: moto sleeps for real (`time.sleep` in retrier_decl); the wait is recorded instead.
* **Speed only** (what is computed stays moto's): the interpreter builds a new boto3 client for every
  Lambda task and every S3 read or write of the Map Run, and compiles a JSONPath parser (a yacc
  table) for every path it evaluates; in `machine()` each client is made once per (region, service)
  and each path parsed once. Both are stateless: the same requests go out, the same values come back.
* **ItemBatcher**: moto's ASL grammar has no `ItemBatcher` (create_state_machine refuses the
  definition). `for_moto` replaces it, and nothing else, by an ItemSelector that builds the same
  `{"BatchInput": <the same BatchInput>, "Items": [item]}` event: batches of one item.

What moto cannot execute (so these tests do not show it): batches of several items
(`MaxItemsPerBatchPath`, `MaxInputBytesPerBatch`); a Map Run failing when more than
`ToleratedFailurePercentagePath` of its items failed (moto records the percentage and counts failed
items, but never fails the Map Run); `RedriveExecution` (not implemented); the ResultWriter's
SUCCEEDED/FAILED result files (moto writes only their manifest, with empty lists); IAM (moto's
Step Functions and Lambda run with no role checks: test_fleet_roles.py decides the roles).
"""

from __future__ import annotations

import copy
import functools
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import boto3
import pytest
from moto.awslambda import models as lambda_models
from moto.stepfunctions.parser.asl.component.common.retry import retrier_decl
from moto.stepfunctions.parser.asl.utils import boto_client, json_path

from tests.terraform.deploy import FLEET_NAME, state_machine_definition

MOTO_REGION = "us-east-1"
MOTO_ACCOUNT = "123456789012"
CLASSES = ("inspect", "audit", "prune", "keys", "erase")
ROLE_ARN = f"arn:aws:iam::{MOTO_ACCOUNT}:role/{FLEET_NAME}-sfn"


def for_moto(definition: Any) -> Any:
    """The rendered definition with its ItemBatcher swapped for an ItemSelector of one-item batches."""
    adapted = copy.deepcopy(definition)
    agents = adapted["States"]["Agents"]
    batcher = agents.pop("ItemBatcher")
    assert set(batcher) == {"MaxItemsPerBatchPath", "MaxInputBytesPerBatch", "BatchInput"}, batcher
    assert "ItemSelector" not in agents
    agents["ItemSelector"] = {"BatchInput": batcher["BatchInput"], "Items.$": "States.Array($$.Map.Item.Value)"}
    return adapted


class Context:
    """The Lambda context the worker reads: a fresh 15-minute invocation."""

    def get_remaining_time_in_millis(self) -> int:
        return 900_000


@dataclass
class Invocation:
    function: str
    event: Any
    error: str | None = None
    answer: Any = None


@dataclass
class Lambdas:
    """The invocations the state machine made, and what answers them."""

    handler: Callable[[Any, Any], Any]
    invocations: list[Invocation] = field(default_factory=list)
    # function name -> error codes to answer the next invocations with, as the Lambda API would
    # (e.g. a 429 TooManyRequestsException), before the function runs at all
    refusals: list[tuple[str, str, int]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def invoke(self, function: Any, event: Any) -> tuple[str, bool, str]:
        with self.lock:
            refusal = self.refusals.pop(0) if self.refusals else None
            invocation = Invocation(function.function_name, event)
            self.invocations.append(invocation)
        if refusal is not None:
            code, message, status = refusal
            invocation.error = code
            refused = lambda_models.LambdaClientError(code, message)  # a ClientError of the Invoke call
            refused.code = status
            raise refused
        try:
            answer = self.handler(event, Context())
        except Exception as failure:
            invocation.error = type(failure).__name__
            return json.dumps({"errorType": type(failure).__name__, "errorMessage": str(failure)}), True, ""
        invocation.answer = answer
        return json.dumps(answer), False, ""

    def items(self, function_suffix: str = "") -> list[str]:
        """The agent ids of every invocation that reached the handler, in order."""
        return [
            item["id"]
            for i in self.invocations
            if i.function.endswith(function_suffix) and "Items" in i.event and i.error not in REFUSED
            for item in i.event["Items"]
        ]


REFUSED = {"TooManyRequestsException", "ServiceException"}


@dataclass
class Machine:
    sfn: Any
    s3: Any
    arn: str
    lambdas: Lambdas
    waits: list[float]
    started: int = 0

    def run(self, execution_input: dict[str, Any], *, name: str | None = None) -> dict[str, Any]:
        """Start an execution, wait for it to end; its description."""
        self.started += 1
        name = name or f"execution-{self.started}"  # moto would name every unnamed execution "None"
        started = self.sfn.start_execution(stateMachineArn=self.arn, input=json.dumps(execution_input), name=name)
        deadline = time.monotonic() + 120  # a guard against a hung interpreter, not a timing assertion
        while True:
            described = self.sfn.describe_execution(executionArn=started["executionArn"])
            if described["status"] != "RUNNING":
                return dict(described)
            if time.monotonic() > deadline:
                pytest.fail(f"the execution did not end: {described}")
            time.sleep(0.1)

    def map_run(self, execution: dict[str, Any]) -> dict[str, Any]:
        (listed,) = self.sfn.list_map_runs(executionArn=execution["executionArn"])["mapRuns"]
        return dict(self.sfn.describe_map_run(mapRunArn=listed["mapRunArn"]))


def _one_client_per_service(make: Callable[..., Any]) -> Callable[..., Any]:
    """`boto3.client` for the interpreter's `boto_client_for`, which passes the same arguments every
    time for a region and service (its Config is rebuilt equal): the first client made is reused."""
    made: dict[tuple[str, str, str | None], Any] = {}
    lock = threading.Lock()

    def client(*, region_name: str, service_name: str, endpoint_url: str | None = None, **kwargs: Any) -> Any:
        key = (region_name, service_name, endpoint_url)
        with lock:
            if key not in made:
                made[key] = make(
                    region_name=region_name, service_name=service_name, endpoint_url=endpoint_url, **kwargs
                )
            return made[key]

    return client


@contextmanager
def machine(patch: pytest.MonkeyPatch, handler: Callable[[Any, Any], Any]) -> Iterator[Machine]:
    """Inside an active mock_aws(config={"stepfunctions": {"execute_state_machine": True}}): the
    five worker functions (answered by `handler`) and the state machine, as the module renders it."""
    lambdas = Lambdas(handler)
    waits: list[float] = []
    patch.setattr(lambda_models.LambdaFunction, "_invoke_lambda", lambda self, event=None: lambdas.invoke(self, event))
    patch.setattr(retrier_decl, "time", SimpleNamespace(sleep=waits.append))  # that module's time only
    patch.setattr(boto_client, "boto3", SimpleNamespace(client=_one_client_per_service(boto3.client)))
    patch.setattr(json_path, "parse", functools.lru_cache(maxsize=None)(json_path.parse))
    iam = boto3.client("iam", region_name=MOTO_REGION)
    role = iam.create_role(RoleName=f"{FLEET_NAME}-sfn", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    functions = boto3.client("lambda", region_name=MOTO_REGION)
    for role_class in CLASSES:
        functions.create_function(
            FunctionName=f"{FLEET_NAME}-{role_class}",
            Runtime="python3.12",
            Role=role,
            Handler="handler.lambda_handler",
            Code={"ZipFile": b"PK\x05\x06" + b"\x00" * 18},  # an empty zip: the code runs in process
        )
    sfn = boto3.client("stepfunctions", region_name=MOTO_REGION)
    definition = for_moto(state_machine_definition(MOTO_REGION, MOTO_ACCOUNT))
    arn = sfn.create_state_machine(name=FLEET_NAME, definition=json.dumps(definition), roleArn=role)["stateMachineArn"]
    yield Machine(sfn, boto3.client("s3", region_name=MOTO_REGION), arn, lambdas, waits)
