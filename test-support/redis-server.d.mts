// Types of redis-server.mjs.
import type { ChildProcess } from 'node:child_process'

/** A redis-server this process started. */
export interface RedisProcess {
  readonly port: number
  readonly url: string
  readonly process: ChildProcess
  readonly pid: number | undefined
  readonly dir: string
  /** Stops the server (SIGKILL after 2 s) and removes its directory. */
  stop(): Promise<void>
}

export function requireBinary(name: string): void
export function freePort(): Promise<number>
export function waitForPing(port: number, timeoutMs: number, child?: ChildProcess): Promise<void>
export function stopProcess(child: ChildProcess, dir: string): Promise<void>
export function redisProcess(port: number, child: ChildProcess, dir: string): RedisProcess
export function startRedis(extraArgs?: readonly string[], fixedPort?: number): Promise<RedisProcess>
