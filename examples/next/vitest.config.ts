import { defineProject } from 'vitest/config'

export default defineProject({
  test: {
    name: 'example-next',
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    // `next build` on a loaded 2-core machine: about 25 s alone, bounded at 4 minutes
    hookTimeout: 300_000,
  },
})
