// Route scopes from the methods a route declares (Node's own list of methods), and the key
// helpers of key-helpers.ts, which import nothing of Node.
import { METHODS } from 'node:http'
import { nonEmpty, routeKey } from './key-helpers.js'

export {
  checkIpv6Subnet,
  type IpKeyOptions,
  ipKey,
  routeKey,
  userKey,
} from './key-helpers.js'

// Every method Node's HTTP parser accepts, HEAD folded into GET (frameworks serve it with GET).
const EVERY_METHOD: readonly string[] = [...new Set(METHODS.map(foldHead))]

function foldHead(method: string): string {
  const m = method.toUpperCase()
  return m === 'HEAD' ? 'GET' : m
}

/**
 * The method part of a route scope from the methods a route DECLARES, never the request's own,
 * so a client cannot open new budgets by changing the method: `GET` for one method (`HEAD`
 * counts as `GET`), `GET,POST` for several (deduplicated, in a fixed order), and `''` for a route
 * that takes every method (`all`) or names none. Adapters work it out once per route.
 *
 * @example
 * declaredMethods(['HEAD', 'GET']) // 'GET'
 * declaredMethods(['post', 'get']) // 'GET,POST'
 * declaredMethods(METHODS) // ''
 */
export function declaredMethods(methods: readonly string[]): string {
  const declared = new Set(methods.map(foldHead))
  if (EVERY_METHOD.every((m) => declared.has(m))) return ''
  return [...declared].sort().join(',')
}

/**
 * A route scope: `declaredMethods(methods)` and the pattern (`GET,POST /x`), or the bare pattern
 * for an every-method route (`/api`).
 *
 * @example
 * declaredRouteKey(['HEAD', 'GET'], '/a') // 'GET /a'
 * declaredRouteKey(METHODS, '/api') // '/api'
 */
export function declaredRouteKey(methods: readonly string[] | string, pattern: string): string {
  const part = typeof methods === 'string' ? methods : declaredMethods(methods)
  return part === '' ? nonEmpty('pattern', pattern) : routeKey(part, pattern)
}
