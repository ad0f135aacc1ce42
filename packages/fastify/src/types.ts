// The plugin's shared types, in a module of their own so the plugin's files import them one way.
import type { Decision } from '@limiter/core'
import type { ResolvedRateLimit } from '@limiter/core/http'
import type { FastifyReply, FastifyRequest } from 'fastify'

/** Full control of a limited response: send the reply. Headers, `Retry-After` included, are set. */
export type OnLimited = (
  request: FastifyRequest,
  reply: FastifyReply,
  decision: Decision,
) => unknown

/** The shared options resolved with Fastify's request and {@link OnLimited}. */
export type Resolved = ResolvedRateLimit<FastifyRequest, OnLimited>
