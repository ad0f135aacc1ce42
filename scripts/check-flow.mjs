// The core README's "How a request flows" section stays true: every path it names exists, and
// every step of its ordered list names at least one file. Run by scripts/check-shape.mjs (CI's
// `pnpm check:shape`); the functions are exported for packages/core/test/readme-flow.test.ts.
//
// A path is a code span holding a `/` (a package name such as `@limiter/core/http` aside): one
// with several segments is read from the repository's root (`packages/core/src/limiter/paths.ts`,
// `lua/gcra.lua`); a bare folder (`limiter/`) is one of packages/core/src.
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

export const FLOW_README = 'packages/core/README.md'
export const FLOW_HEADING = '## How a request flows'
const CORE_SRC = 'packages/core/src'
const PATH = /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*\/?$/

/** The section's lines, from its heading to the next heading of its level (or undefined). */
function sectionOf(markdown) {
  const lines = markdown.split('\n')
  const start = lines.findIndex((line) => line.trim() === FLOW_HEADING)
  if (start < 0) return undefined
  let end = start + 1
  while (end < lines.length && !/^#{1,2} /.test(lines[end])) end++
  return { start, lines: lines.slice(start, end) }
}

/** The paths a line names, each as written. */
function pathsIn(line) {
  const found = []
  for (const [, span] of line.matchAll(/`([^`]+)`/g))
    if (span.includes('/') && !span.startsWith('@') && PATH.test(span)) found.push(span)
  return found
}

/** Where a path named in the section is, from the repository's root. */
export function flowTarget(path) {
  return path.includes('/') && !/^[^/]+\/$/.test(path) ? path : `${CORE_SRC}/${path}`
}

/**
 * What is wrong with the flow section of `markdown` (the README's text), its paths looked up
 * under `root`: one message per problem, none when it holds.
 */
export function flowProblems(root, markdown) {
  const section = sectionOf(markdown)
  if (section === undefined) return [`${FLOW_README}: no "${FLOW_HEADING}" section`]
  const problems = []
  let steps = 0
  let step // the open list item: { line, paths }
  const close = () => {
    if (step !== undefined && step.paths === 0)
      problems.push(`${FLOW_README}:${step.line}: step names no file`)
    step = undefined
  }
  section.lines.forEach((text, i) => {
    const line = section.start + i + 1
    if (/^\d+\. /.test(text)) {
      close()
      steps++
      step = { line, paths: 0 }
    } else if (!/^\s+\S/.test(text)) close()
    for (const path of pathsIn(text)) {
      if (step !== undefined) step.paths++
      if (!existsSync(join(root, flowTarget(path))))
        problems.push(`${FLOW_README}:${line}: names \`${path}\`, which does not exist`)
    }
  })
  close()
  if (steps === 0) problems.push(`${FLOW_README}: "${FLOW_HEADING}" has no ordered list of files`)
  return problems
}

/** flowProblems of the README in the repository at `root`. */
export function checkFlow(root) {
  return flowProblems(root, readFileSync(join(root, FLOW_README), 'utf8'))
}
