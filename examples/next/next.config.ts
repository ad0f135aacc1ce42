import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { NextConfig } from 'next'

const here = dirname(fileURLToPath(import.meta.url))

const config: NextConfig = {
  // the pnpm workspace's root, where the lockfile is (Turbopack would guess it and warn)
  turbopack: { root: join(here, '../..') },
}

export default config
