// Test support: a README's proxy recipe on an adapter whose framework reads the client address
// from X-Forwarded-For itself: behind one proxy, clients the proxy forwards get a budget each;
// without the recipe they all share the proxy's; with the framework's trust-everything setting,
// a client picks its own address.
import { expect, it } from 'vitest'
import { captureWarnings } from './adapter-helpers.js'

/** The framework settings the recipe's tests compare. */
export type ProxySetting = 'recipe' | 'none' | 'forgeable'

/** An app limited to 1 a minute per client address, its store counting the keys consumed. */
export interface ProxyApp {
  /** The status of a `GET /` through supertest (from 127.0.0.1, the proxy) with `headers`. */
  status(headers: Record<string, string>): Promise<number>
  readonly store: { readonly keys: readonly string[] }
}

// What one proxy sends for a client: the client's own X-Forwarded-For, if any, then the address
// the proxy saw (the supertest connection itself comes from 127.0.0.1, the proxy's address).
const viaProxy = (client: string, forged?: string) => ({
  'x-forwarded-for': forged === undefined ? client : `${forged}, ${client}`,
})

const A = '198.51.100.1'
const B = '198.51.100.2'

/**
 * The recipe's three tests, titled by `titles` (the recipe's and the trust-everything one);
 * `advice` is what the trust-everything warning tells the user to set instead.
 */
export function describeProxyRecipe(
  titles: { readonly recipe: string; readonly forgeable: string; readonly advice: string },
  appWith: (setting: ProxySetting) => ProxyApp,
): void {
  it(titles.recipe, async () => {
    const capture = captureWarnings()
    try {
      const { status, store } = appWith('recipe') // the README's line
      expect(await status(viaProxy(A))).toBe(200)
      expect(await status(viaProxy(B))).toBe(200)
      expect(await status(viaProxy(A))).toBe(429)
      // An address the client put in front of the proxy's is not read: still client A.
      expect(await status(viaProxy(A, '203.0.113.7'))).toBe(429)
      expect(store.keys).toEqual([A, B, A, A])
      await new Promise((r) => setImmediate(r))
      expect(capture.warnings).toEqual([])
    } finally {
      capture.stop()
    }
  })

  it('without it, every forwarded client shares the proxy address and its budget', async () => {
    const capture = captureWarnings()
    try {
      const { status, store } = appWith('none')
      expect(await status(viaProxy(A))).toBe(200)
      expect(await status(viaProxy(B))).toBe(429)
      expect(store.keys).toEqual(['127.0.0.1', '127.0.0.1'])
      await new Promise((r) => setImmediate(r))
      expect(capture.warnings.map((w) => (w as { code?: string }).code)).toEqual([
        'LIMITER_FORWARDED_IGNORED',
      ])
    } finally {
      capture.stop()
    }
  })

  it(`${titles.forgeable}; one LIMITER_PERMISSIVE_TRUST_PROXY warning says so`, async () => {
    const capture = captureWarnings()
    try {
      const { status, store } = appWith('forgeable')
      expect(await status(viaProxy(A))).toBe(200)
      expect(await status(viaProxy(A, '203.0.113.7'))).toBe(200)
      expect(await status(viaProxy(A, '203.0.113.8'))).toBe(200)
      expect(store.keys).toEqual([A, '203.0.113.7', '203.0.113.8'])
      await new Promise((r) => setImmediate(r))
      const warnings = capture.warnings as Array<Error & { code?: string }>
      expect(warnings.map((w) => w.code)).toEqual(['LIMITER_PERMISSIVE_TRUST_PROXY'])
      expect(warnings[0]?.message).toContain(titles.advice)
      expect(warnings[0]?.message).toMatch(/any client can pick its key/)
    } finally {
      capture.stop()
    }
  })
}
