// @limiter/core/shed: keeping the process up under overload, by priority class.
export {
  type RequestListener,
  type ShedFirstOptions,
  type ShedQueueOptions,
  shedFirst,
} from '../http/shed-first.js'
export {
  type AdaptiveEvent,
  type AdaptiveLease,
  type AdaptiveLimit,
  type AdaptiveOptions,
  type AdaptiveState,
  createAdaptiveLimit,
  type DoneOptions,
} from './adaptive.js'
export { ADAPTIVE_CHANNEL, SHED_CHANNEL, type ShedEvent } from './events.js'
export { PRIORITY_RANKS, type Priority, priorityRank } from './priority.js'
export { createShedder } from './shedder.js'
export type { ProcessReading, ShedSignal } from './signals.js'
export type {
  ShedAdmitted,
  Shedder,
  ShedderOptions,
  ShedderState,
  ShedReading,
  ShedRefused,
  ShedThresholds,
} from './types.js'
