// The Fetch kit and the root entry load nothing of Node's HTTP: a Fetch-API host (Bun, Deno,
// Workers) may have no node:http or node:net at all.
import { readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../src')

// Every module `entry` loads, following relative imports (`./x.js` is the source `./x.ts`), with
// the bare specifiers each one names.
function graph(entry: string): Map<string, string[]> {
  const seen = new Map<string, string[]>()
  const visit = (file: string): void => {
    if (seen.has(file)) return
    const text = readFileSync(file, 'utf8')
    const specs = [...text.matchAll(/^(?:import|export)\b[^'"]*?from\s+'([^']+)'/gms)]
      .filter((m) => !/^(?:import|export)\s+type\b/.test(m[0]))
      .map((m) => m[1] as string)
    seen.set(file, specs)
    for (const spec of specs)
      if (spec.startsWith('.')) visit(resolve(dirname(file), spec.replace(/\.js$/, '.ts')))
  }
  visit(resolve(SRC, entry))
  return seen
}

const nodeModules = (entry: string) =>
  [...graph(entry).values()].flat().filter((spec) => spec.startsWith('node:'))

describe('what the entries load', () => {
  it('@limiter/core/fetch loads neither node:http nor node:net', () => {
    // the limiter's own: crypto (lease ids, hashed keys) and diagnostics_channel (events), which
    // Bun, Deno and Workers (nodejs_compat) provide
    expect(new Set(nodeModules('fetch/index.ts'))).toEqual(
      new Set(['node:crypto', 'node:diagnostics_channel']),
    )
  })

  it('the fetch folder itself imports no node: module', () => {
    const own = [...graph('fetch/index.ts')].filter(([file]) =>
      file.startsWith(resolve(SRC, 'fetch')),
    )
    expect(own.length).toBeGreaterThan(3)
    expect(own.flatMap(([, specs]) => specs).filter((s) => s.startsWith('node:'))).toEqual([])
  })

  it('the root entry loads neither node:http nor node:net', () => {
    const modules = nodeModules('index.ts')
    expect(modules).not.toContain('node:http')
    expect(modules).not.toContain('node:net')
  })

  it('the walk does see node:http where it is loaded (@limiter/core/http)', () => {
    expect(nodeModules('http/index.ts')).toContain('node:http')
  })
})
