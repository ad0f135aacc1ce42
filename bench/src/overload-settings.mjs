// The overload section's settings: the workloads, the contenders' thresholds, the load.

/** The handlers: a CPU-bound one and an I/O-bound one in front of a downstream of fixed capacity. */
export const WORKLOADS = {
  // 5 ms of CPU per request: under 200 requests/s on one core, so 4x stays within what one
  // generator process sends on time on a shared 2-core machine
  cpu: { cpuMs: 5 },
  // 5 slots held 50 ms each: the downstream serves at most 100 requests/s (at 4x, 400 requests/s
  // with 320 refused: a busy 2-core machine still parses that much; at 250/s it did not)
  io: { ioMs: 50, ioSlots: 5 },
}

/** Ours on the CPU-bound server: the shedder alone, on the event loop's signals. */
export const OURS_CPU = {
  interval: '100ms',
  recovery: 5,
  steps: 10,
  thresholds: { elu: 0.9, delay: '50ms' },
}

/**
 * Ours on the I/O-bound server: the event loop is idle there, so the adaptive limit does the
 * work (it learns the downstream's in-flight capacity from the round trips).
 */
export const OURS_IO = {
  interval: '100ms',
  recovery: 5,
  steps: 10,
  thresholds: { elu: 0.9, delay: '50ms' },
  adaptive: { min: 4, max: 200, window: '250ms', tolerance: 1.2 },
}

/** @fastify/under-pressure: the same thresholds, read over each 100 ms interval. */
export const UNDER_PRESSURE = {
  maxEventLoopDelay: 50,
  maxEventLoopUtilization: 0.9,
  eventLoopUtilizationMode: 'interval',
  sampleInterval: 100,
  retryAfter: 1,
}

/** The load: open loop at these multiples of the capacity measured closed-loop. */
export const OVERLOAD = {
  multipliers: [0.5, 1, 2, 4],
  criticalShare: 0.2,
  warmupMs: 2000,
  measureMs: 8000,
  timeoutMs: 2000,
  capacityMs: 4000,
  capacityConnections: { cpu: 8, io: 32 },
  contenders: ['none', 'under-pressure', 'ours'],
}
