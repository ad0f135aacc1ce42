// The core README's "How a request flows" section, as scripts/check-flow.mjs checks it (run by
// `pnpm check:shape` in CI): the real README holds; a bogus path, a step naming no file and a
// missing section each fail.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { checkFlow, FLOW_HEADING, FLOW_README, flowProblems } from '../../../scripts/check-flow.mjs'

const root = join(import.meta.dirname, '../../..')
const readme = readFileSync(join(root, FLOW_README), 'utf8')
const empty = mkdtempSync(join(tmpdir(), 'flow-'))
afterAll(() => rmSync(empty, { recursive: true, force: true }))

describe('the request-flow check', () => {
  it('passes the README as it is, whose steps each name a file', () => {
    expect(checkFlow(root)).toEqual([])
    const section = readme.slice(readme.indexOf(FLOW_HEADING))
    expect(section).toContain('1. `packages/express/src/index.ts`')
    expect(section).toContain('`packages/core/src/limiter/create-limiter.ts`')
  })

  it('fails on a path that does not exist, naming it and its line', () => {
    const bogus = readme.replace(
      '`packages/core/src/limiter/paths.ts`',
      '`packages/core/src/limiter-paths.ts`',
    )
    const problems = flowProblems(root, bogus)
    expect(problems).toHaveLength(1)
    expect(problems[0]).toMatch(/README\.md:\d+: names `packages\/core\/src\/limiter-paths\.ts`/)
  })

  it('fails on a bare folder that is not one of packages/core/src', () => {
    const bogus = readme.replace('`limiter/`', '`limiters/`')
    expect(flowProblems(root, bogus)).toEqual([expect.stringContaining('`limiters/`')])
  })

  it('reads every path from the root it is given', () => {
    expect(flowProblems(empty, readme).length).toBeGreaterThan(10)
  })

  it('fails on a step that names no file, and on a section without steps or no section', () => {
    const text = (body: string) => `# x\n\n${FLOW_HEADING}\n\nSome words.\n\n${body}\n## Next\n`
    expect(flowProblems(root, text('1. `lua/gcra.lua`: the script\n2. then the answer\n'))).toEqual(
      [expect.stringMatching(/README\.md:8: step names no file/)],
    )
    expect(
      flowProblems(root, text('1. `lua/gcra.lua`: the\n   script, `lua/block.lua`\n')),
    ).toEqual([])
    expect(flowProblems(root, text(''))).toEqual([expect.stringContaining('no ordered list')])
    expect(flowProblems(root, '# x\n\n## Other\n')).toEqual([expect.stringContaining('no "')])
  })
})
