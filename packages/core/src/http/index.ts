// @limiter/core/http: the adapter kit. What every framework adapter shares (option resolution,
// the request check, headers, the limited response, refunds, route scopes), for the bundled
// adapters and for any other framework's.

export { boundedKey, isKeyDigest } from '../stores/bounded-key.js'
export {
  beginCheck,
  checkRequest,
  isThenable,
  type MaybePromise,
  withCheck,
} from './check.js'
export { optionsObject, type PartialOptions, probeOf, withDefaults } from './defaults.js'
export {
  applyHeaders,
  type CheckOutcome,
  type CloseTarget,
  type FinishTarget,
  type HeaderTarget,
  limitedResponse,
  owesWhenOver,
  refundOnce,
  refundWhenDone,
  settleCheck,
  whenDue,
} from './handle.js'
export {
  draft6Headers,
  draft7Headers,
  draft10Headers,
  formatHeaders,
  HEADER_STANDARDS,
  type HeaderPair,
  type HeaderPolicy,
  type HeaderStandard,
  headerPolicies,
  headerPolicy,
  legacyHeaders,
  resetSeconds,
  retryAfterHeader,
  retryAfterSeconds,
  sfString,
} from './headers.js'
export {
  checkIpv6Subnet,
  declaredMethods,
  declaredRouteKey,
  type IpKeyOptions,
  ipKey,
  routeKey,
  userKey,
} from './keys.js'
export { type LimitSet, type LimitsFunction, MAX_LIMIT_SETS } from './limit-sets.js'
export { type HeaderValue, type MemberPlace, mergeHeaders } from './merge-headers.js'
export {
  clientGone,
  handlerDone,
  type LifecycleTarget,
  onSocketClose,
  type Settle,
  type SocketLike,
  settleWhenOver,
  untilHandlerDone,
} from './node-lifecycle.js'
export {
  type AdapterSpec,
  type Awaitable,
  type LimitedBody,
  type LimitsOptions,
  type Message,
  type MessageBody,
  type OnePolicyOptions,
  type PeerOptionNames,
  type RateLimitBaseOptions,
  type RateLimitOptions,
  type ResolvedRateLimit,
  resolveRateLimitOptions,
  type SharedRateLimitOptions,
} from './options.js'
export { giveBackReservation, owedOnce } from './owed.js'
export {
  DENIED,
  forbiddenBody,
  PROBLEM_JSON,
  problemBody,
  QUOTA_EXCEEDED_TYPE,
  unavailableBody,
  windowText,
} from './problem.js'
export type { ProxyTrust } from './proxy-trust.js'
export type {
  CheckResult,
  DeniedCheck,
  LimitedResponse,
  RateLimitCheck,
} from './types.js'
