// ioredis clients for the bench's private Redis, counting every command they send.
import { Redis } from 'ioredis'

/** Commands sent by every client made with {@link connect} (a round-trip proxy, client side). */
export const sent = { commands: 0 }

/**
 * An ioredis client to 127.0.0.1:`port` that counts what it sends. Every command, pipelined,
 * in MULTI or auto-pipelined, passes through `sendCommand`, so one counter sees them all.
 */
export async function connect(port, { autoPipelining = false } = {}) {
  const client = new Redis({ host: '127.0.0.1', port, enableAutoPipelining: autoPipelining })
  await client.ping()
  const send = client.sendCommand
  client.sendCommand = function countingSendCommand(command, stream) {
    sent.commands++
    return send.call(this, command, stream)
  }
  return client
}

/** An uncounted client for the harness itself (INFO, FLUSHDB, MEMORY USAGE). */
export async function connectAdmin(port) {
  const client = new Redis({ host: '127.0.0.1', port })
  await client.ping()
  return client
}
