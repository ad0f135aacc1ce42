// `pnpm simulate`: the committed charts are what the script writes, they say what the READMEs
// claim, and one of them renders to a picture that is not blank.
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Resvg } from '@resvg/resvg-js'
import { beforeAll, describe, expect, it } from 'vitest'
import {
  COLORS,
  indexPage,
  mostInAnySecond,
  SHAPES,
  type SimulateResult,
  simulateAll,
} from '../scripts/simulate/index.mjs'
import { createLimiter, MemoryStore } from '../src/index.js'
import { withClock } from '../src/testing/index.js'

const DOCS = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'docs', 'algorithms')

let results: SimulateResult[] = []
beforeAll(async () => {
  results = await simulateAll({ createLimiter, MemoryStore, withClock })
})

function result(algorithm: string, shape: string): SimulateResult {
  const found = results.find((r) => r.algorithm === algorithm && r.shape === shape)
  if (found === undefined) throw new Error(`no chart for ${algorithm} under ${shape}`)
  return found
}

function committed(file: string): string | undefined {
  try {
    return readFileSync(join(DOCS, file), 'utf8')
  } catch {
    return undefined
  }
}

describe('pnpm simulate', () => {
  it('the committed charts in docs/algorithms are what the script writes', () => {
    const stale = results.filter((r) => committed(r.file) !== r.svg).map((r) => r.file)
    if (committed('README.md') !== indexPage(results)) stale.push('README.md')
    const made = new Set(results.map((r) => r.file))
    const extra = readdirSync(DOCS).filter((f) => f.endsWith('.svg') && !made.has(f))
    expect({ stale, extra }, 'docs/algorithms is stale: run pnpm simulate').toEqual({
      stale: [],
      extra: [],
    })
    expect(results).toHaveLength(6 * SHAPES.length)
  })

  it('the charts show what the core README says about them', () => {
    // sliding-log is exact: never more than the limit in any 1 s, whatever the traffic.
    for (const shape of SHAPES)
      expect(result('sliding-log', shape.name).most).toBeLessThanOrEqual(10)
    // fixed-window: the window that opened at 0 s takes 9 before the edge, the next 10 after.
    expect(result('fixed-window', 'boundary-burst').most).toBe(19)
    // sliding-window: the edge burst alone is held to the limit; a burst at a window's end
    // followed by steady traffic is under-weighted, and more than the limit passes.
    expect(result('sliding-window', 'boundary-burst').most).toBe(10)
    expect(result('sliding-window', 'edge-then-steady').most).toBe(18)
    // gcra ignores edges: a full bucket's 10, then one per 100 ms; at most burst + limit - 1.
    expect(result('gcra', 'boundary-burst').most).toBe(11)
    expect(result('gcra', 'steady').most).toBe(19)
    for (const shape of SHAPES) {
      const gcra = result('gcra', shape.name).admitted
      expect(result('token-bucket', shape.name).admitted).toEqual(gcra)
      expect(result('leaky-bucket', shape.name).admitted).toEqual(gcra)
      expect(result('gcra', shape.name).most).toBeLessThanOrEqual(19)
    }
  })

  it('gcra with burst 1 never admits more than the limit in any second', async () => {
    const api = { createLimiter, MemoryStore, withClock }
    for (const shape of SHAPES) {
      const most = await mostInAnySecond(api, { algorithm: 'gcra', limit: 10, burst: 1 }, shape)
      expect(most, shape.name).toBeLessThanOrEqual(10)
    }
  })

  it('a chart renders to a picture with its bars and lines in it', () => {
    const chart = pixels(result('sliding-window', 'edge-then-steady').svg)
    expect(chart.inked).toBeGreaterThan(0.04)
    expect(chart.admitted).toBeGreaterThan(2000)
    expect(chart.window).toBeGreaterThan(500)
    expect(chart.limit).toBeGreaterThan(300)
    // The same measures on a blank chart: the check can fail.
    const blank = pixels(
      '<svg xmlns="http://www.w3.org/2000/svg" width="760" height="370"><rect width="760" height="370" fill="#ffffff"/></svg>',
    )
    expect(blank).toEqual({ inked: 0, admitted: 0, window: 0, limit: 0 })
  })
})

// Renders `svg` and measures it: the share of pixels that are not white, and how many pixels
// have each series' colour.
function pixels(svg: string): { inked: number; admitted: number; window: number; limit: number } {
  const image = new Resvg(svg, { font: { loadSystemFonts: false } }).render()
  const rgba = image.pixels
  const near = (hex: string) => {
    const want = [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16))
    return (i: number) => want.every((v, k) => Math.abs((rgba[i + k] as number) - v) <= 16)
  }
  const isAdmitted = near(COLORS.admitted)
  const isWindow = near(COLORS.window)
  const isLimit = near(COLORS.limit)
  let inked = 0
  const counts = { admitted: 0, window: 0, limit: 0 }
  for (let i = 0; i < rgba.length; i += 4) {
    if (rgba[i] !== 255 || rgba[i + 1] !== 255 || rgba[i + 2] !== 255) inked++
    if (isAdmitted(i)) counts.admitted++
    if (isWindow(i)) counts.window++
    if (isLimit(i)) counts.limit++
  }
  return { inked: inked / (image.width * image.height), ...counts }
}
