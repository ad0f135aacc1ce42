// The process's own load, read once per interval: event-loop utilization and delay over that
// interval only (never over the process's life), and the heap in use.
import { monitorEventLoopDelay, performance } from 'node:perf_hooks'
import { LimiterTypeError } from '../common/errors.js'

/** The signals a shedder watches, in the order it names them when several are over. */
export type ShedSignal = 'elu' | 'delay' | 'inflight' | 'queue' | 'heap'

const SIGNALS: readonly string[] = ['elu', 'delay', 'inflight', 'queue', 'heap']

/** `signal`, checked to be a {@link ShedSignal}. */
export function checkSignal(signal: unknown): ShedSignal {
  if (typeof signal === 'string' && SIGNALS.includes(signal)) return signal as ShedSignal
  throw new LimiterTypeError('signal', signal, `one of ${SIGNALS.map((s) => `'${s}'`).join(', ')}`)
}

/** What the process measured over one interval. */
export interface ProcessReading {
  /** Event-loop utilization over the interval, 0 to 1. */
  readonly elu: number
  /** The 99th percentile event-loop delay over the interval, in ms. */
  readonly delayMs: number
  /** Heap in use at the end of the interval, in bytes (0 when nobody asked for it). */
  readonly heapUsedBytes: number
}

/** Reads the process's signals; `read()` covers the time since the previous `read()`. */
export interface SignalSource {
  read(): ProcessReading
  close(): void
}

/**
 * The real signals: `performance.eventLoopUtilization` deltas, a `monitorEventLoopDelay`
 * histogram reset after each read, and `process.memoryUsage().heapUsed` when `heap` is asked for.
 */
export function processSignals(heap: boolean): SignalSource {
  let previous = performance.eventLoopUtilization()
  const delay = monitorEventLoopDelay({ resolution: 10 })
  delay.enable()
  return {
    read() {
      const now = performance.eventLoopUtilization()
      const elu = performance.eventLoopUtilization(now, previous).utilization
      previous = now
      // an interval without a single sample (a loop blocked the whole time) reads as 0: the
      // ELU of that interval is then 1 and says it
      const delayMs = delay.count > 0 ? delay.percentile(99) / 1e6 : 0
      delay.reset()
      return { elu, delayMs, heapUsedBytes: heap ? process.memoryUsage().heapUsed : 0 }
    },
    close() {
      delay.disable()
    },
  }
}
