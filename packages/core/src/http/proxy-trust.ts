// Trust-proxy settings under which a client picks its own address, and so its rate-limit key:
// each framework's "trust every hop", and withRateLimit's default outside Vercel.

/**
 * A host's trust-proxy setting as its adapter knows it: the app that holds it (Express `req.app`,
 * Koa `ctx.app`, Fastify `request.server`), or a Fetch host's `trustProxy` option (`defaulted`:
 * withRateLimit chose it, no option said so).
 */
export type ProxyTrust =
  | { readonly framework: 'express' | 'koa' | 'fastify'; readonly app: unknown }
  | {
      readonly framework: 'fetch'
      readonly trustProxy: boolean | number
      readonly defaulted?: boolean | undefined
    }

/** A setting that lets a client pick its key: the warning's code and what to say. */
export interface TrustFinding {
  readonly code: 'LIMITER_PERMISSIVE_TRUST_PROXY' | 'LIMITER_TRUST_PROXY_DEFAULT'
  readonly message: string
}

const PICKS =
  'the client address is then the left-most X-Forwarded-For entry, which the client writes: any client can pick its key (a fresh budget per request) by sending X-Forwarded-For.'

// What each framework's "trust every hop" is, and what to set instead: the number of proxies
// in front, or their addresses (Fastify 5 takes a hop count as trusting no proxy at all).
const ADVICE = {
  express:
    "The app's `'trust proxy'` setting trusts every hop (`true`, or a function that any address passes), so " +
    `${PICKS} Set the number of proxies in front instead (\`app.set('trust proxy', 1)\` behind one), or their addresses.`,
  koa:
    '`app.proxy = true` with `app.maxIpsCount` 0 (its default) reads every hop, so ' +
    `${PICKS} Also set \`app.maxIpsCount\` to the number of proxies in front (\`app.maxIpsCount = 1\` behind one).`,
  fastify:
    '`trustProxy` trusts every hop (`true`, or a function that any address passes), so ' +
    `${PICKS} Set \`trustProxy\` to your proxies' addresses instead (\`Fastify({ trustProxy: '10.0.0.0/8' })\`).`,
  fetch:
    '`trustProxy: true` reads every hop, so ' +
    `${PICKS} Pass the number of proxies in front instead (\`trustProxy: 1\` behind one).`,
} as const

const NEXT_DEFAULT =
  "withRateLimit keys requests by the right-most X-Forwarded-For entry (`trustProxy: 1`, its default), which is the client's address only when a proxy of yours appends it (Vercel, a load balancer). `next start` with nothing in front keeps the X-Forwarded-For a client sends (it sets the header only when there is none), so a client reaching the app directly picks its own key. Behind one proxy, pass `trustProxy: 1` (the number of proxies) to say so; exposed directly, put a proxy in front or pass a `key` (an API key, a user id)."

// Fastify keeps its options under a symbol of its own on the root instance, which every
// plugin's instance inherits; the option is not in its public `initialConfig`.
function fastifyTrustProxy(server: unknown): unknown {
  for (let o = server; o !== null && typeof o === 'object'; o = Object.getPrototypeOf(o)) {
    const symbol = Object.getOwnPropertySymbols(o).find((s) => s.description === 'fastify.options')
    if (symbol !== undefined) {
      const options = (o as Record<symbol, unknown>)[symbol]
      return options !== null && typeof options === 'object'
        ? (options as { trustProxy?: unknown }).trustProxy
        : undefined
    }
  }
  return undefined
}

// Addresses no proxy of anyone's has (the documentation ranges), at hops from the socket's own
// to one no chain is that long: a setting that trusts each of them of a family trusts any client.
const STRANGERS = [
  [
    ['198.51.100.7', 0],
    ['203.0.113.9', 1],
    ['192.0.2.33', 40],
  ],
  [
    ['2001:db8::7', 0],
    ['2001:db8:ffff::9', 1],
    ['2001:db8:1::33', 40],
  ],
] as const

// Whether a trust function (Express's compiled 'trust proxy fn', a Fastify `trustProxy`
// function) trusts any address at any hop. A function that throws trusts nobody here.
function trustsStrangers(trust: unknown): boolean {
  if (typeof trust !== 'function') return false
  try {
    return STRANGERS.some((family) =>
      family.every(([address, hop]) => Boolean(trust(address, hop))),
    )
  } catch {
    return false
  }
}

// Whether the app's setting trusts every hop of X-Forwarded-For.
function trustsEveryHop(framework: 'express' | 'koa' | 'fastify', app: unknown): boolean {
  // (an Express app is a function)
  if (app === null || (typeof app !== 'object' && typeof app !== 'function')) return false
  if (framework === 'fastify') {
    const setting = fastifyTrustProxy(app)
    return setting === true || trustsStrangers(setting)
  }
  if (framework === 'koa') {
    const { proxy, maxIpsCount } = app as { proxy?: unknown; maxIpsCount?: unknown }
    return proxy === true && !(typeof maxIpsCount === 'number' && maxIpsCount > 0)
  }
  // Express compiles every form of the setting (true, a hop count, subnets, a function) into
  // one function of (address, hop); its subnets cannot be /0
  const { get } = app as { get?: unknown }
  if (typeof get !== 'function') return false
  return get.call(app, 'trust proxy') === true || trustsStrangers(get.call(app, 'trust proxy fn'))
}

const onVercel = (): boolean =>
  Boolean((globalThis as { process?: { env?: Record<string, unknown> } }).process?.env?.VERCEL)

/**
 * What is wrong with a trust-proxy setting for keying by client address, if anything: a setting
 * that believes every X-Forwarded-For hop (Express `'trust proxy'` `true`, Koa `proxy` with
 * `maxIpsCount` 0, Fastify or a Fetch host's `trustProxy: true`), or withRateLimit's default
 * `trustProxy: 1` off Vercel (right only behind a proxy).
 */
export function trustFinding(trust: ProxyTrust | undefined): TrustFinding | undefined {
  if (trust === undefined) return undefined
  if (trust.framework === 'fetch') {
    if (trust.trustProxy === true)
      return { code: 'LIMITER_PERMISSIVE_TRUST_PROXY', message: ADVICE.fetch }
    if (trust.defaulted === true && !onVercel())
      return { code: 'LIMITER_TRUST_PROXY_DEFAULT', message: NEXT_DEFAULT }
    return undefined
  }
  if (!trustsEveryHop(trust.framework, trust.app)) return undefined
  return { code: 'LIMITER_PERMISSIVE_TRUST_PROXY', message: ADVICE[trust.framework] }
}
