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
 * held 0.88-0.9 (77% of capacity at 2x). Steps of a tenth of low, one per 3 quiet intervals;
 * where the direction turns the ladder halves its step (down to a 160th of low), so at 4x it
 * settles on a 27th of low where whole tenths (a third of capacity) swung. Twentieths ramp
 * up more slowly at the start, and the backlog of the ramp is what 4x pays for longest; 2 or 4
 * steps ramp faster but overshoot (critical p99 0.25-1.8 s at 4x). `delay: '30ms'`: with 5 ms
 * handlers the p99 delay sits at 12-18 ms while the loop keeps up, and reaches 35-80 ms while
 * the first second of 4x piles up in the sockets; over 60 ms (twice the threshold) takes the
 * rest of low at once, so less piles up. What piles up costs 4x the longest: critical alone
 * is 80% of the loop, so it drains at the rest (4x goodput 84-92% at 50-100 ms, 90-94% at 30).
 * `queue: '20ms'` goes with shedFirst's queue (OURS_QUEUE): see there.
 */
export const OURS_CPU = {
  interval: '100ms',
  recovery: 3,
  steps: 10,
  recoveryBand: 0.05,
  thresholds: { elu: 0.98, delay: '30ms', queue: '20ms' },
}

/**
 * Ours on the I/O-bound server: the event loop is idle there, so the adaptive limit does the
 * work (it learns the downstream's in-flight capacity from the round trips). It settles near
 * tolerance x 5 slots + queueSize, if the probe's cap (probeRatio x the initial 20) does not
 * queue: at probeRatio 0.5 and queueSize 4 it probed at 10, took 100 ms for the no-load round
 * trip and settled at 16-25 in flight (critical p99 300 ms at 2x against 59 ms at 0.5x).
 * `smoothing: 0.5`: at the default 0.2 the limit took ~3 s to come down from 20 to 7, and
 * critical requests queued behind the excess (p99 146-151 ms at 2x); at 0.5, ~1 s (86-102 ms).
 */
export const OURS_IO = {
  interval: '100ms',
  recovery: 5,
  steps: 10,
  thresholds: { elu: 0.9, delay: '50ms' },
  adaptive: {
    min: 4,
    max: 200,
    window: '250ms',
    tolerance: 1.1,
    queueSize: 1,
    probeRatio: 0.25,
    smoothing: 0.5,
  },
}

/**
 * shedFirst's `queue` per workload. CPU-bound: one event loop runs requests in the order it
 * reads them, so at ~95% busy a critical request waited behind 3-5 low handlers (critical p99
 * 18-83 ms at 2x, 28-51 ms at 4x, against 8-16 ms at 0.5x, in 6 runs). With the queue a
 * critical request runs as it is read and waits for one low handler at most. `maxWait: '30ms'`:
 * a queued low request older than that is refused (signal 'queue'); at 100 ms more of the
 * ramp's backlog was served late (4x critical p99 27-47 ms, goodput 86-91%), at 30 ms 25-39 ms
 * and 92-93%. What was left came from two places (traced): the end of the ramp, still reading
 * the first second's backlog out of the sockets, and each fall of the ladder that admitted more
 * low than the loop had room for. `thresholds.queue: '20ms'` in OURS_CPU sees both (the time
 * in the process is ~6 ms while the loop keeps up: a critical handler and its wait) and over
 * 40 ms takes the rest of low in one rise. Together (chrt runs on a shared 2-core machine,
 * load 3-16), medians of 5-7 runs against 8 without: 0.5x critical p99 10 ms (10); 2x 14 ms
 * (24), goodput 94% (92); 4x 24 ms (49), goodput 92% (90). The 4x tail still swings (15-49 ms):
 * a server busy all the time also meets the kernel's RT throttling (50 ms a second).
 * Without the ladder (the queue alone) it served 96-100% of capacity but critical p50 rose to
 * 35 ms at 4x: every turn of the loop ran one queued low request, so the criticals waited in
 * the sockets. I/O-bound: the handler returns at once and the event loop is idle, so there is
 * nothing to reorder: off.
 */
export const OURS_QUEUE = {
  cpu: { maxWait: '30ms' },
  io: false,
}

/** @fastify/under-pressure: ours' CPU-bound thresholds, read over each 100 ms interval. */
export const UNDER_PRESSURE = {
  maxEventLoopDelay: 30,
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
