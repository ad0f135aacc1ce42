// Writing a run's results: markdown, SVG and JSON under bench/results/.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { overloadSvg } from './overload-report.mjs'
import { markdown } from './report/markdown.mjs'
import { svg } from './report/svg.mjs'

const DIR = fileURLToPath(new URL('../results/', import.meta.url))

/**
 * Full runs write `results-<date>.{md,svg,json}` and `latest.*`; quick runs only `quick-latest.*`,
 * so a quick check never replaces the full table. `dir` (bench/results/ by default) is where.
 * Returns the paths written.
 */
export function writeResults(results, dir = DIR) {
  mkdirSync(dir, { recursive: true })
  const stamp = results.meta.date.replace(/:\d\d\.\d+Z$/, 'Z').replace(/:/g, '')
  const bases = results.meta.profile === 'quick' ? ['quick-latest'] : [`results-${stamp}`, 'latest']
  const files = {
    md: markdown(results),
    svg: svg(results),
    json: `${JSON.stringify(results, null, 2)}\n`,
  }
  // section 10's chart, beside the headline's: <base>-overload.svg
  if (results.overload?.rows.length > 0) files['overload.svg'] = overloadSvg(results.overload)
  const written = []
  for (const base of bases) {
    for (const [ext, text] of Object.entries(files)) {
      const path = join(resolve(dir), `${base}${ext === 'overload.svg' ? '-' : '.'}${ext}`)
      writeFileSync(path, text)
      written.push(path)
    }
  }
  return written
}
