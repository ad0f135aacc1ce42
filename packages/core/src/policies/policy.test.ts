import { describe, expect, it } from 'vitest'
import { parseDuration } from '../common/duration.js'
import { definePolicy } from './policy.js'

describe('parseDuration', () => {
  it.each([
    [250, 250],
    ['500ms', 500],
    ['10s', 10_000],
    ['15m', 900_000],
    ['1h', 3_600_000],
    ['1d', 86_400_000],
    ['1.5s', 1500],
  ])('%j -> %i ms', (input, ms) => {
    expect(parseDuration(input, 'window')).toBe(ms)
  })
  it.each([['10x'], [''], ['-1s'], [0], [1.5], [Number.NaN], [null], ['0.0001s']])(
    'rejects %j naming the option',
    (input) => {
      expect(() => parseDuration(input, 'window')).toThrow(/`window`/)
    },
  )
})

describe('definePolicy', () => {
  it('defaults to gcra with burst = limit', () => {
    expect(definePolicy({ limit: 100, window: '1m' })).toEqual({
      algorithm: 'gcra',
      limit: 100,
      windowMs: 60_000,
      burst: 100,
    })
  })
  it.each([
    [{ algorithm: 'nope', limit: 1, window: 1 }, /`algorithm`.*"nope"/, RangeError],
    [{ limit: 0, window: 1 }, /`limit`.*0/, RangeError],
    [{ limit: -3, window: 1 }, /`limit`/, RangeError],
    [{ limit: '10', window: 1 }, /`limit`.*"10"/, TypeError],
    [{ limit: 1, window: 'soon' }, /`window`.*"soon"/, TypeError],
    [{ algorithm: 'gcra', limit: 1, window: 1, burst: 0 }, /`burst`.*0/, RangeError],
    [{ algorithm: 'fixed-window', limit: 5, window: 1, burst: 9 }, /`burst`.*9/, RangeError],
    [{ limit: 2 ** 40, window: '1d' }, /`limit`/, RangeError],
    [
      { algorithm: 'sliding-log', limit: 2 ** 32, window: 1 },
      /`limit`.*2\^32 - 1.*got 4294967296/,
      RangeError,
    ],
  ])('rejects %j', (options, message, type) => {
    const attempt = () => definePolicy(options as never)
    expect(attempt).toThrow(type)
    expect(attempt).toThrow(message)
  })
  it("accepts sliding-log's largest limit, and any algorithm's above it", () => {
    expect(definePolicy({ algorithm: 'sliding-log', limit: 2 ** 32 - 1, window: 1 }).limit).toBe(
      2 ** 32 - 1,
    )
    expect(definePolicy({ algorithm: 'sliding-window', limit: 2 ** 32, window: 1 }).limit).toBe(
      2 ** 32,
    )
  })
  it('errors carry a code, the option and the value', () => {
    try {
      definePolicy({ limit: 0, window: 1 })
      expect.unreachable()
    } catch (error) {
      expect(error).toMatchObject({ code: 'ERR_LIMITER_OPTION', option: 'limit', value: 0 })
    }
  })
})
