// The default client key, on every adapter (each test file calls `clientKeyContract` inside its
// framework's describe): an X-Forwarded-For entry with a port (Azure Application Gateway's form)
// or a bracketed IPv6 address keys as the bare address, one budget and not one per connection;
// a trust setting that lets any client pick its key is pointed out once, naming the setting to
// use instead; and trusting the one proxy in front stays quiet.
import { expect, it } from 'vitest'
import { warningsDuring } from './adapter-helpers.js'

/** An app limited at 1 per minute by the adapter's default key, and what its store was asked. */
export interface ClientKeyApp {
  /** The status of a request arriving through the proxy with this X-Forwarded-For. */
  status(xff: string): Promise<number>
  /** The keys the store was asked for, in order, without any prefix the adapter adds. */
  keys(): readonly string[]
  close?(): Promise<unknown>
}

export interface ClientKeyHarness {
  /** An app that trusts the one proxy in front of it (by hop count or by address). */
  behindOne(): Promise<ClientKeyApp>
  /** An app with the framework's trust-every-hop setting. */
  trustingAll(): Promise<ClientKeyApp>
  /** What the warning names as the setting to use instead (a fragment of its message). */
  hint: string
  /** Other settings of the framework's that any address passes (a function, a `/0` subnet). */
  trustingAllAlso?: readonly (readonly [string, () => Promise<ClientKeyApp>])[]
}

const PORTS: readonly (readonly [string, string, string, string])[] = [
  ['an IPv4 address with a port', '203.0.113.7:50000', '203.0.113.7:50001', '203.0.113.7'],
  ['a bracketed IPv6 address with a port', '[2001:db8::1]:443', '[2001:db8::2]', '2001:db8::/56'],
]

/** Runs `use` on a new app, closing it afterwards, even when `use` fails. */
async function withApp<T>(
  open: () => Promise<ClientKeyApp>,
  use: (app: ClientKeyApp) => Promise<T>,
): Promise<T> {
  const app = await open()
  try {
    return await use(app)
  } finally {
    await app.close?.()
  }
}

export function clientKeyContract(harness: ClientKeyHarness): void {
  it.each(PORTS)(
    '%s from the proxy keys as the bare address: one budget, not one per connection',
    (_name, first, second, key) =>
      withApp(harness.behindOne, async (app) => {
        expect(await app.status(first)).toBe(200)
        expect(await app.status(second)).toBe(429)
        expect(app.keys()).toEqual([key, key])
      }),
  )

  const trustingAll: readonly (readonly [string, () => Promise<ClientKeyApp>])[] = [
    ['its trust-every-hop setting', harness.trustingAll],
    ...(harness.trustingAllAlso ?? []),
  ]
  it.each(trustingAll)('%s is pointed out once, naming the setting to use', async (_, open) => {
    const warnings = await warningsDuring(() =>
      withApp(open, async (app) => {
        expect(await app.status('203.0.113.1')).toBe(200)
        expect(await app.status('203.0.113.2')).toBe(200)
      }),
    )
    expect(warnings.map((w) => w.code)).toEqual(['LIMITER_PERMISSIVE_TRUST_PROXY'])
    expect(warnings[0]?.name).toBe('LimiterWarning')
    expect(warnings[0]?.message).toContain(harness.hint)
  })

  it('trusting the one proxy in front gives no trust-proxy warning', async () => {
    const warnings = await warningsDuring(() =>
      withApp(harness.behindOne, async (app) => {
        expect(await app.status('203.0.113.1')).toBe(200)
      }),
    )
    expect(warnings.map((w) => w.code)).toEqual([])
  })
}
