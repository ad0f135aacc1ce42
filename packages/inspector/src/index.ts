// @limiter/inspector: an operator's page for @limiter/core limiters, as one Fetch handler, and
// the few lines that mount it on Express, Fastify, Koa and Hono.
export { AUDIT_CHANNEL, type AuditEvent } from './actions.js'
export { type HandleContext, type Inspector, inspector } from './inspector.js'
export {
  type ExpressRequestLike,
  expressInspector,
  type FastifyInstanceLike,
  type FastifyReplyLike,
  type FastifyRequestLike,
  fastifyInspector,
  type HonoContextLike,
  honoInspector,
  type KoaContextLike,
  koaInspector,
} from './mounts.js'
export { type Authorize, hashKey, type InspectorOptions } from './options.js'
export { type HeavyHitter, mergeSummaries, SpaceSaving, type SummaryData } from './space-saving.js'
export type { InspectorState, PolicyState, TopKey } from './state.js'
