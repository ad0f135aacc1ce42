// Loads @limiter/express, @limiter/koa, @limiter/fastify and @limiter/nest if they exist and are built.
// They are looked up by package name first (if bench/package.json lists them), then at their
// built entry in the workspace, so the bench runs before the adapters exist.
import { existsSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'

const PACKAGES = fileURLToPath(new URL('../../../packages/', import.meta.url))

/** `{ module }` with the adapter's exports, or `{ missing }` with a sentence saying why not. */
export async function loadAdapter(framework) {
  const name = `@limiter/${framework}`
  try {
    return { module: await import(name) }
  } catch (error) {
    if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !String(error.message).includes(name)) {
      return { missing: `${name} failed to load: ${error.message}` }
    }
  }
  const dir = `${PACKAGES}${framework}`
  if (!existsSync(dir)) return { missing: `not built yet: packages/${framework} does not exist` }
  const entry = `${dir}/dist/index.mjs`
  if (!existsSync(entry)) return { missing: `not built yet: run pnpm --filter ${name} build` }
  try {
    return { module: await import(pathToFileURL(entry).href) }
  } catch (error) {
    return { missing: `${name} is built but failed to load: ${error.message}` }
  }
}
