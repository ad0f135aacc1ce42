// Test support: how an adapter keys requests by client address behind a proxy, as each adapter's
// tests check it: a forged X-Forwarded-For ignored (and said so) unless the framework is told to
// trust the proxy, read when it is, and IPv6 clients grouped by /56.
import { expect } from 'vitest'
import { warningsDuring } from './adapter-helpers.js'

/** One `GET /` with X-Forwarded-For `xff` (from 127.0.0.1), its status and body. */
export type SendForwarded = (xff: string) => Promise<{ status: number; text: string }>

/**
 * On an app limited to 1 per client address, answering its key (`ipKey`), that does not trust
 * the proxy: X-Forwarded-For is not read, and one LIMITER_FORWARDED_IGNORED warning says so,
 * naming the setting (`hint`) that would. `app` makes the app, once warnings are being collected.
 */
export async function expectForwardedIgnored(
  app: () => SendForwarded,
  hint: string,
): Promise<void> {
  const warnings = await warningsDuring(async () => {
    const send = app()
    expect((await send('198.51.100.1')).text).toBe('127.0.0.1')
    expect((await send('198.51.100.2')).status).toBe(429)
  })
  expect(warnings.map((w) => w.code)).toEqual(['LIMITER_FORWARDED_IGNORED'])
  expect(warnings[0]?.message).toContain(hint)
}

/** The same app trusting the proxy: each forwarded client has its key, IPv6 ones by /56. */
export async function expectForwardedRead(send: SendForwarded): Promise<void> {
  expect((await send('198.51.100.1')).status).toBe(200)
  expect((await send('198.51.100.2')).status).toBe(200)
  expect((await send('2001:db8::1')).text).toBe('2001:db8::/56')
  expect((await send('2001:db8:0:ff:ffff::9')).status).toBe(429)
  expect((await send('2001:db8:0:100::1')).status).toBe(200)
}

/**
 * Sends 40 requests from rotating IPv6 addresses inside 2001:db8:1:200::/56 (a subscriber's
 * block: its /64s vary too), in three spellings, to an app limited to 10 per client address
 * (`status` sends one with `headers` and resolves to the status), then one from the next /56: the
 * first 10 pass, the rest of the /56 is refused, the next /56 has its own counter, and `store`
 * saw exactly the two /56 keys.
 */
export async function expectOneCounterPer56(
  status: (headers: Record<string, string>) => Promise<number>,
  store: { readonly keys: readonly string[] },
): Promise<void> {
  const hex = (n: number) => (n & 0xffff).toString(16)
  const statuses: number[] = []
  for (let i = 0; i < 40; i++) {
    const net = hex(0x200 + ((i * 37) & 0xff))
    const host = [i * 7919, i * 104_729, i * 31, i + 1].map(hex)
    const spellings = [
      `2001:db8:1:${net}:${host.join(':')}`,
      `2001:0DB8:0001:${net.padStart(4, '0').toUpperCase()}:${host.map((h) => h.padStart(4, '0').toUpperCase()).join(':')}`,
      `2001:db8:1:${net}::${host[3]}`,
    ]
    statuses.push(await status({ 'x-forwarded-for': spellings[i % 3] as string }))
  }
  expect(statuses.filter((s) => s === 200)).toHaveLength(10)
  expect(statuses.slice(10).every((s) => s === 429)).toBe(true)
  expect(await status({ 'x-forwarded-for': '2001:db8:1:300::1' })).toBe(200)
  expect(new Set(store.keys)).toEqual(new Set(['2001:db8:1:200::/56', '2001:db8:1:300::/56']))
}
