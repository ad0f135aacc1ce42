// The decisions published on `limiter:decision` while a test runs: each listener is
// unsubscribed after the test (call `onDecision` inside a test, with its file's `afterEach` set
// up by importing this module).
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { afterEach } from 'vitest'
import type { Decision, Limiter } from '../../src/index.js'

/** What `limiter:decision` publishes, as these tests read it. */
export interface Told {
  readonly limiter: Limiter
  readonly key: string
  readonly cost: number
  readonly decision: Decision
  readonly priority: unknown
}

const listeners: ((message: unknown) => void)[] = []
afterEach(() => {
  for (const listener of listeners.splice(0)) unsubscribe('limiter:decision', listener)
})

/** Calls `listener` with every decision published from now until the test ends; returns how to stop. */
export function onDecision(listener: (told: Told) => void): () => void {
  const raw = (message: unknown): void => listener(message as Told)
  listeners.push(raw)
  subscribe('limiter:decision', raw)
  return () => unsubscribe('limiter:decision', raw)
}
