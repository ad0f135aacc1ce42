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

/**
 * Ours on the CPU-bound server: the shedder alone, on the event loop's signals. Capacity is
 * measured closed loop with the loop at ELU ~1.0, so goodput is about the ELU the shedder holds
 * (less what the 503s cost): `elu: 0.98` with a narrow band (0.93-0.98) holds near it where 0.9
 * held 0.88-0.9 (77% of capacity at 2x). Steps of a twentieth of low, one per 3 quiet intervals:
 * with tenths, a step at 4x was a third of capacity; with fiftieths, one per 5 intervals, the
 * way back from all of low shed took longer than the 8 s measured. `delay: '100ms'`: with 5 ms
 * handlers, a poll phase that reads 10 queued requests already delays timers 50 ms.
 */
export const OURS_CPU = {
  interval: '100ms',
  recovery: 3,
  steps: 20,
  recoveryBand: 0.05,
  thresholds: { elu: 0.98, delay: '100ms' },
}

/**
 * Ours on the I/O-bound server: the event loop is idle there, so the adaptive limit does the
 * work (it learns the downstream's in-flight capacity from the round trips). It settles near
 * tolerance x 5 slots + queueSize, if the probe's cap (probeRatio x the initial 20) does not
 * queue: at probeRatio 0.5 and queueSize 4 it probed at 10, took 100 ms for the no-load round
 * trip and settled at 16-25 in flight (critical p99 300 ms at 2x against 59 ms at 0.5x).
 */
export const OURS_IO = {
  interval: '100ms',
  recovery: 5,
  steps: 10,
  thresholds: { elu: 0.9, delay: '50ms' },
  adaptive: { min: 4, max: 200, window: '250ms', tolerance: 1.1, queueSize: 1, probeRatio: 0.25 },
}

/** @fastify/under-pressure: ours' CPU-bound thresholds, read over each 100 ms interval. */
export const UNDER_PRESSURE = {
  maxEventLoopDelay: 100,
  maxEventLoopUtilization: 0.98,
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
