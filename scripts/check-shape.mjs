// The shape CI keeps: no import circle among the repository's own modules, and no function over
// 60 lines in the packages' sources. Fails (exit 1) listing what it found.
//
// - Circles: relative imports (static, `export … from`, `import type`, dynamic `import()` and
//   `require()`) between the tracked .ts/.mts/.mjs/.cjs/.js files of packages/*/src,
//   packages/*/test, packages/*/scripts, test-support, scripts, bench and examples. A circle is a
//   strongly connected component of more than one file (or a file that imports itself).
// - Long functions: every function, method, accessor, constructor and arrow function of
//   packages/*/src (tests and generated files left out), counted from its first line to its last.
// - The request flow: every path packages/core/README.md's "How a request flows" names exists
//   (scripts/check-flow.mjs).
//
// scripts/shape-allow.json lists the exceptions, each with the reason and the most lines it may
// have: the escape hatch while a split is under way, not a habit. An entry that no longer matches
// anything over the limit fails too, so it is removed when the function is split.
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, posix } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { checkFlow } from './check-flow.mjs'

const MAX_LINES = 60
const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const CODE = /\.(ts|mts|cts|js|mjs|cjs)$/
const GRAPH_DIRS = /^(packages\/[^/]+\/(src|test|scripts)|test-support|scripts|bench|examples)\//
const SOURCE = /^packages\/[^/]+\/src\/.*\.(ts|mts|cts)$/
const NOT_SOURCE = /\.test\.(ts|mts|cts)$|\.d\.(ts|mts|cts)$|generated/

const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' })
  .split('\0')
  .filter((file) => CODE.test(file) && !file.includes('/node_modules/'))
  .filter((file) => existsSync(join(root, file)))
const read = (file) => readFileSync(join(root, file), 'utf8')

/** The tracked file a relative specifier names, or undefined (a package, or not tracked). */
function resolve(from, specifier, known) {
  if (!specifier.startsWith('./') && !specifier.startsWith('../')) return undefined
  const base = posix.normalize(posix.join(posix.dirname(from), specifier))
  const candidates = [
    base,
    base.replace(/\.js$/, '.ts'),
    base.replace(/\.js$/, '.tsx'),
    base.replace(/\.mjs$/, '.mts'),
    base.replace(/\.cjs$/, '.cts'),
    `${base}.ts`,
    `${base}.mts`,
    `${base}.js`,
    `${base}.mjs`,
    `${base}/index.ts`,
    `${base}/index.js`,
    `${base}/index.mjs`,
  ]
  return candidates.find((candidate) => known.has(candidate))
}

/** Import circles: the strongly connected components of the import graph (Tarjan). */
function importCircles() {
  const files = tracked.filter((file) => GRAPH_DIRS.test(file))
  const known = new Set(files)
  const graph = new Map()
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(read(file), true, true)
    const deps = new Set()
    for (const { fileName } of importedFiles) {
      const target = resolve(file, fileName, known)
      if (target !== undefined) deps.add(target)
    }
    graph.set(file, deps)
  }
  let next = 0
  const index = new Map()
  const low = new Map()
  const stack = []
  const onStack = new Set()
  const circles = []
  const visit = (file) => {
    index.set(file, next)
    low.set(file, next)
    next++
    stack.push(file)
    onStack.add(file)
    for (const dep of graph.get(file)) {
      if (!index.has(dep)) {
        visit(dep)
        low.set(file, Math.min(low.get(file), low.get(dep)))
      } else if (onStack.has(dep)) low.set(file, Math.min(low.get(file), index.get(dep)))
    }
    if (low.get(file) !== index.get(file)) return
    const component = []
    let top
    do {
      top = stack.pop()
      onStack.delete(top)
      component.push(top)
    } while (top !== file)
    if (component.length > 1 || graph.get(file).has(file)) circles.push(component.sort())
  }
  for (const file of graph.keys()) if (!index.has(file)) visit(file)
  return circles.sort((a, b) => (a[0] < b[0] ? -1 : 1))
}

/** The name a function is known by: its own, or the variable, property or class member it is. */
function nameOf(node) {
  if (node.name !== undefined) return node.name.getText()
  if (ts.isConstructorDeclaration(node)) return 'constructor'
  const parent = node.parent
  if (parent?.name !== undefined) return parent.name.getText()
  return '<anonymous>'
}

/** Functions of packages/*\/src longer than MAX_LINES: { file, line, name, lines }. */
function longFunctions() {
  const long = []
  for (const file of tracked.filter((f) => SOURCE.test(f) && !NOT_SOURCE.test(f))) {
    const source = ts.createSourceFile(file, read(file), ts.ScriptTarget.Latest, true)
    const lineOf = (position) => source.getLineAndCharacterOfPosition(position).line
    const visit = (node) => {
      if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
        const first = lineOf(node.getStart(source))
        const lines = lineOf(node.getEnd()) - first + 1
        if (lines > MAX_LINES) long.push({ file, line: first + 1, name: nameOf(node), lines })
      }
      ts.forEachChild(node, visit)
    }
    visit(source)
  }
  return long
}

/** scripts/shape-allow.json: `{ long: [{ file, name, maxLines, why }] }`. */
function allowed() {
  const path = join(root, 'scripts/shape-allow.json')
  if (!existsSync(path)) return []
  const entries = JSON.parse(readFileSync(path, 'utf8')).long ?? []
  for (const entry of entries) {
    const ok =
      typeof entry.file === 'string' &&
      typeof entry.name === 'string' &&
      Number.isInteger(entry.maxLines) &&
      typeof entry.why === 'string' &&
      entry.why.trim() !== ''
    if (!ok) {
      console.error(`shape: bad entry in scripts/shape-allow.json: ${JSON.stringify(entry)}`)
      console.error('shape: each entry needs file, name, maxLines (an integer) and why')
      process.exit(1)
    }
  }
  return entries
}

const circles = importCircles()
const allow = allowed()
const used = new Set()
const long = []
for (const found of longFunctions()) {
  const entry = allow.find((a) => a.file === found.file && a.name === found.name)
  if (entry !== undefined && found.lines <= entry.maxLines) {
    used.add(entry)
    console.log(
      `allowed: ${found.file}:${found.line} ${found.name} ${found.lines} lines (${entry.why})`,
    )
  } else long.push(found)
}
const stale = allow.filter((entry) => !used.has(entry))
const flow = checkFlow(root)

for (const circle of circles) console.log(`circle: ${circle.join(' <-> ')}`)
for (const f of long) console.log(`long: ${f.file}:${f.line} ${f.name} ${f.lines} lines`)
for (const entry of stale)
  console.log(
    `stale: scripts/shape-allow.json allows ${entry.file} ${entry.name} up to ${entry.maxLines} lines, but it is not over ${MAX_LINES} (or grew past ${entry.maxLines}, listed above): remove or fix the entry`,
  )
for (const problem of flow) console.log(`flow: ${problem}`)
console.log(
  `shape: ${circles.length} import circles, ${long.length} functions over ${MAX_LINES} lines, ${stale.length} stale allowances, ${flow.length} request-flow problems`,
)
const failed = circles.length + long.length + stale.length + flow.length > 0
process.exit(failed ? 1 : 0)
