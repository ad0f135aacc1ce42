// @limiter/core/shed from the packed tarball, in a scratch directory, as ESM and as CJS.
import { afterAll, beforeAll, expect, it } from 'vitest'
import { packAndInstall, type Scratch } from '../../../test-support/pack.js'

let scratch: Scratch
beforeAll(async () => {
  scratch = await packAndInstall(['packages/core'], [], 'packages/core')
}, 180_000)
afterAll(() => scratch?.remove())

const check = `
const shedder = shed.createShedder({ adaptive: { min: 1, max: 1 } })
const first = shedder.admit('low')
const second = shedder.admit('low')
const critical = shedder.admit('critical')
shedder.close()
console.log(JSON.stringify([first.admitted, second.admitted, second.signal, critical.admitted, shed.priorityRank('low'), shed.SHED_CHANNEL]))
`
const expected = [true, false, 'inflight', true, 3, 'limiter:shed']

it('loads as ESM and as CJS, and admits by the adaptive limit', async () => {
  const esm = await scratch.run('shed.mjs', `import * as shed from '@limiter/core/shed'\n${check}`)
  expect(JSON.parse(esm)).toEqual(expected)
  const cjs = await scratch.run('shed.cjs', `const shed = require('@limiter/core/shed')\n${check}`)
  expect(JSON.parse(cjs)).toEqual(expected)
})
