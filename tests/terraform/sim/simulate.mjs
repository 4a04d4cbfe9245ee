// Line protocol for tests/terraform/test_policies.py: each stdin line is one JSON request
// {"simulation": <iam-simulate Simulation>}; each stdout line is the JSON answer
// {"result": "Allowed" | "ImplicitlyDenied" | "ExplicitlyDenied", "ignoredContextKeys": [...]}
// or {"error": ...} when the simulator refuses the input (bad policy, unknown action, ...).
import { createInterface } from 'node:readline'
import { runSimulation } from '@cloud-copilot/iam-simulate'

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity })
for await (const line of lines) {
  if (!line.trim()) continue
  let answer
  try {
    const { simulation } = JSON.parse(line)
    const outcome = await runSimulation(simulation, { simulationMode: 'Strict' })
    if (outcome.resultType === 'error') {
      answer = { error: outcome.errors }
    } else if (outcome.resultType === 'single') {
      answer = {
        result: outcome.overallResult,
        ignoredContextKeys: outcome.result.ignoredContextKeys ?? [],
      }
    } else {
      answer = { error: `unexpected result type ${outcome.resultType}` }
    }
  } catch (err) {
    answer = { error: String(err && err.stack ? err.stack : err) }
  }
  process.stdout.write(JSON.stringify(answer) + '\n')
}
