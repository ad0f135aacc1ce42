// Types for the test that imports the plain .mjs modules of `pnpm simulate`.

/** What `simulateAll` needs from `@limiter/core` and `@limiter/core/testing`. */
export interface SimulateApi {
  readonly createLimiter: typeof import('../../src/index.js').createLimiter
  readonly MemoryStore: typeof import('../../src/index.js').MemoryStore
  readonly withClock: typeof import('../../src/testing/index.js').withClock
}

export interface Shape {
  readonly name: string
  readonly title: string
  readonly note: string
  readonly lengthMs: number
  readonly sent: readonly number[]
}

export interface SimulateResult {
  readonly file: string
  readonly algorithm: string
  readonly shape: string
  readonly admitted: readonly number[]
  readonly most: number
  readonly svg: string
}

export declare const ALGORITHMS: readonly string[]
export declare const SHAPES: readonly Shape[]
export declare const POLICY: {
  readonly limit: number
  readonly window: string
  readonly windowMs: number
}
export declare const COLORS: Readonly<Record<string, string>> & {
  readonly admitted: string
  readonly window: string
  readonly limit: string
}
export declare function simulateAll(api: SimulateApi): Promise<SimulateResult[]>
export declare function indexPage(results: readonly SimulateResult[]): string
export declare function mostInAnySecond(
  api: SimulateApi,
  policy: { readonly algorithm: string; readonly limit: number; readonly burst?: number },
  shape: Shape,
): Promise<number>
