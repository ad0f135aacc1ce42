// Priority classes: what a request is worth to the server when it cannot serve everyone.
import { LimiterRangeError, LimiterTypeError } from '../common/errors.js'

/**
 * How much a request matters when the server is overloaded: `'critical'` (never shed),
 * `'high'`, `'normal'` (the default), `'low'`, or a whole number rank: `0` is critical, `1`
 * high, `2` normal, `3` low, and larger numbers are lower still (shed first).
 */
export type Priority = 'critical' | 'high' | 'normal' | 'low' | number

/** The rank of each named class: lower ranks matter more; rank 0 is never shed. */
export const PRIORITY_RANKS = Object.freeze({ critical: 0, high: 1, normal: 2, low: 3 } as const)

/** The largest rank a number may give (classes past it are one class anyway). */
export const MAX_RANK = 1000

/**
 * The rank of `priority`: `'critical'` 0, `'high'` 1, `'normal'` 2, `'low'` 3, a whole number
 * from 0 to 1000 as itself. `undefined` is `'normal'`. Throws a `TypeError` or `RangeError`
 * (code `ERR_LIMITER_OPTION`) for anything else.
 *
 * @example
 * priorityRank('low') // 3
 */
export function priorityRank(priority: Priority | undefined, option = 'priority'): number {
  if (priority === undefined) return PRIORITY_RANKS.normal
  if (typeof priority === 'string') {
    const rank = (PRIORITY_RANKS as Readonly<Record<string, number>>)[priority]
    if (rank !== undefined && Object.hasOwn(PRIORITY_RANKS, priority)) return rank
  } else if (typeof priority === 'number') {
    if (Number.isInteger(priority) && priority >= 0 && priority <= MAX_RANK) return priority
    throw new LimiterRangeError(option, priority, `must be a whole number from 0 to ${MAX_RANK}`)
  }
  throw new LimiterTypeError(
    option,
    priority,
    "'critical', 'high', 'normal', 'low' or a whole number rank (0 is critical)",
  )
}

/** The name of `rank` when it has one (`3` -> `'low'`), else the rank itself. */
export function priorityName(rank: number): Priority {
  switch (rank) {
    case 0:
      return 'critical'
    case 1:
      return 'high'
    case 2:
      return 'normal'
    case 3:
      return 'low'
    default:
      return rank
  }
}
