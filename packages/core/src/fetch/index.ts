// @limiter/core/fetch: the kit for Web-standard hosts (a `Request` in, a `Response` out). It loads
// nothing of Node's HTTP: the client address comes from a resolver, the end of a request from its
// response body and its `signal`.
export { optionsObject } from '../http/defaults.js'
export { checkTrustProxy, clientAddress, type TrustProxy } from './client-ip.js'
export {
  type AnswerFrom,
  type AnsweringCall,
  type FetchAddressOptions,
  type FetchCall,
  type FetchHost,
  type FetchKit,
  type FetchOnLimited,
  type FetchRateLimitOptions,
  fetchKit,
} from './kit.js'
export { keepAlive, type WaitUntil } from './lifecycle.js'
export {
  createFetchLimiter,
  type FetchExtras,
  type FetchLimiter,
  type FetchLimiterOptions,
} from './limiter.js'
export {
  mutableCopy,
  type Respond,
  type RespondInit,
  wireRecord,
  withHeaders,
} from './response.js'
export { type RouteHandler, withRateLimit } from './route.js'
