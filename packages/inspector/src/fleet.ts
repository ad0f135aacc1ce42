// What this process shares through Redis, and when: its top refused keys (redis-sync), its
// decisions per second (rates-sync) and its blocks (blocks), written every 5 s, before each read
// of the page, and soon after a block.
import type { BlockRegistry } from './blocks.js'
import type { ResolvedOptions } from './options.js'
import { RateWriter, readFleetRates, reportProcess } from './rates-sync.js'
import type { PolicyRecord, Recorder } from './recorder.js'
import { writeSummary } from './redis-sync.js'
import { STEP_SECONDS, type SummarySource } from './state.js'

/** This process's part of the fleet's view. */
export class Fleet {
  readonly #recorder: Recorder
  readonly #blocks: BlockRegistry
  readonly #options: ResolvedOptions<unknown>
  readonly #send: NonNullable<ResolvedOptions<unknown>['redis']>
  readonly #pid: string
  readonly #writers = new Map<PolicyRecord, RateWriter>()

  constructor(
    recorder: Recorder,
    blocks: BlockRegistry,
    options: ResolvedOptions<unknown>,
    pid: string,
  ) {
    this.#recorder = recorder
    this.#blocks = blocks
    this.#options = options
    this.#send = options.redis as NonNullable<typeof options.redis>
    this.#pid = pid
    for (const records of recorder.policies.values())
      for (const record of records) this.#writers.set(record, new RateWriter(record))
  }

  /** Writes this process's blocks, summaries and rates; answers how many processes report. */
  async write(nowMs: number): Promise<number> {
    const send = this.#send
    const prefix = this.#options.redisPrefix
    await this.writeBlocks(nowMs)
    const minute = Math.floor(nowMs / 60_000)
    for (const records of this.#recorder.policies.values()) {
      for (const record of records) {
        for (const m of [minute, minute - 1]) {
          const own = record.summaryOf(m)
          if (own !== undefined)
            await writeSummary(send, prefix, this.#pid, record.id, m, own.data())
        }
        await this.#writers.get(record)?.write(send, prefix, nowMs)
      }
    }
    return reportProcess(send, prefix, this.#pid, nowMs)
  }

  /** Writes the blocks not yet written. */
  writeBlocks(nowMs: number): Promise<void> {
    return this.#blocks.flush(this.#send, this.#options.redisPrefix, nowMs)
  }

  /** The source's Redis parts: `sync` writes, then reads every process's blocks. */
  source(): Pick<SummarySource, 'rates' | 'sync'> {
    const send = this.#send
    const prefix = this.#options.redisPrefix
    return {
      rates: (record, nowMs) => readFleetRates(send, prefix, record.id, nowMs, STEP_SECONDS),
      sync: async (nowMs) => {
        const processes = await this.write(nowMs)
        await this.#blocks.read(send, prefix, nowMs)
        return processes
      },
    }
  }
}
