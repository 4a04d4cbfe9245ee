"""Fleet jobs: one admin operation (prune, verify, rotate, rewrap, reseal, shred, purge) over many agents.

`jobs` is the job table; `worker` runs a batch of agents (the Step Functions Distributed Map's
worker Lambda and the local engine's processes run the same code); `manifest` lists the agents;
`local` and `stepfunctions` are the engines; `runs` reads a run's results back.
"""
