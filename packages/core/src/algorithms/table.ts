// Shared runner for the table-driven algorithm tests: steps of (at ms, cost) -> expected decision.
import { expect } from 'vitest'
import { definePolicy, type PolicyOptions } from '../policies/policy.js'
import type { AlgorithmTwin } from './outcome.js'

/** One step: at `t` ms, a request of `cost` expects these decision fields. */
export interface Step {
  readonly t: number
  readonly cost?: number
  readonly allowed: boolean
  readonly remaining?: number
  readonly resetMs?: number
  readonly retryAfterMs?: number
}

/** Runs `steps` through `twin` on one key and checks each decision. */
export function runTable<S>(
  twin: AlgorithmTwin<S>,
  options: PolicyOptions,
  steps: readonly Step[],
): void {
  const policy = definePolicy(options)
  let state: S | undefined
  for (const [i, step] of steps.entries()) {
    const outcome = twin.check(state, step.t, policy, step.cost ?? 1)
    if (outcome.state !== undefined) state = outcome.state
    const got = {
      allowed: outcome.allowed,
      remaining: outcome.remaining,
      resetMs: outcome.resetMs,
      retryAfterMs: outcome.retryAfterMs,
    }
    const want = Object.fromEntries(Object.entries(step).filter(([k]) => k in got))
    expect({ step: i, ...got }).toMatchObject({ step: i, ...want })
  }
}
