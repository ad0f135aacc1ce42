// The page in a real browser (Debian's chromium, headless): it renders, its script refreshes the
// live part under the page's CSP, the forms block a key, the blocks table lists it (and a
// penalty) and its row's button unblocks it, the look-up and preview work without JavaScript, and `UPDATE_SCREENSHOT=1` saves the README's screenshot to docs/inspector.png.
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { createLimiter } from '@limiter/core'
import express from 'express'
import { type BrowserContext, chromium } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { expressInspector, hashKey, inspector } from '../src/index.js'
import { whoIs } from './contract.js'

const api = createLimiter({ name: 'api', limit: 20, window: '1m' })
const login = createLimiter({
  name: 'login',
  limits: [
    { name: 'burst', limit: 3, window: '10s', algorithm: 'fixed-window' },
    { name: 'hourly', limit: 10, window: '1h', algorithm: 'sliding-window' },
  ],
})
const page = inspector({ limiters: [api, login], authorize: whoIs, actions: true })
let base: string
let close: () => Promise<void>
let browser: Awaited<ReturnType<typeof chromium.launch>>

beforeAll(async () => {
  const app = express()
  app.get('/hit', async (req, res) => {
    const decision = await api.consume(String(req.query.key))
    res.status(decision.allowed ? 200 : 429).end()
  })
  app.use('/ops/limits', expressInspector(page))
  const server = app.listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  close = () => new Promise<void>((resolve) => server.close(() => resolve()))
  for (let i = 0; i < 80; i++) await api.consume(`user:${i % 5 === 0 ? i % 4 : 0}`)
  for (let i = 0; i < 30; i++) await login.consume(`ip:10.0.0.${i % 3}`)
  await login.penalize('ip:10.0.0.7', 12) // past both limits: listed as a penalty
  // launch() gives the browser a fresh temporary profile (user data dir) of its own.
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
})

afterAll(async () => {
  await browser?.close()
  page.close()
  await close()
})

async function context(javaScriptEnabled: boolean): Promise<BrowserContext> {
  return browser.newContext({
    javaScriptEnabled,
    extraHTTPHeaders: { 'x-user': 'admin' },
    viewport: { width: 1100, height: 900 },
  })
}

describe('the inspector in chromium', () => {
  it('renders, refreshes itself every 2 s under its CSP, and blocks then unblocks a key', async () => {
    const ctx = await context(true)
    const tab = await ctx.newPage()
    const problems: string[] = []
    tab.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text())
    })
    tab.on('pageerror', (e) => problems.push(String(e)))
    await tab.goto(`${base}/ops/limits/`)
    expect(await tab.title()).toBe('Rate limits')
    expect(await tab.locator('section.policy').count()).toBe(3)
    expect(await tab.locator('svg.chart polyline').count()).toBeGreaterThan(0)
    const updated = await tab.locator('#live p.note').textContent()
    // The script's refresh replaces the live part, with a new "Updated" time.
    // (A function, not a string: the page's CSP forbids eval.)
    await tab.waitForFunction(
      (before) => {
        const { document } = globalThis as unknown as {
          document: { querySelector(selector: string): { textContent: string | null } | null }
        }
        return document.querySelector('#live p.note')?.textContent !== before
      },
      updated,
      { timeout: 20_000 },
    )
    const block = tab.locator('form[action$="/api/block"]')
    await block.locator('select').selectOption('api')
    await block.locator('input[name="key"]').fill('user:9')
    await block.locator('button').click()
    await tab.waitForURL(/message=/)
    expect(await tab.locator('.msg').textContent()).toMatch(/Blocked user:9 in api/)
    expect((await fetch(`${base}/hit?key=user:9`)).status).toBe(429)
    // the blocks table lists it (masked), beside the penalty, and keeps it through a refresh
    const rows = tab.locator('table.blocks tbody tr')
    expect(await rows.count()).toBe(2)
    const row = rows.filter({ hasText: hashKey('user:9') })
    expect(await row.textContent()).toMatch(/^api.*block.*Z\d+ sUnblock$/)
    expect(await rows.filter({ hasText: hashKey('ip:10.0.0.7') }).textContent()).toMatch(/penalty/)
    const stamp = await tab.locator('#live p.note').textContent()
    await tab.waitForFunction(
      (before) => {
        const { document } = globalThis as unknown as {
          document: { querySelector(selector: string): { textContent: string | null } | null }
        }
        return document.querySelector('#live p.note')?.textContent !== before
      },
      stamp,
      { timeout: 20_000 },
    )
    expect(await rows.count()).toBe(2)
    // UPDATE_SCREENSHOT=1 rewrites the README's picture; otherwise the shot is only checked.
    const path = join(import.meta.dirname, '../docs/inspector.png')
    const shot = await tab.screenshot({
      fullPage: true,
      ...(process.env.UPDATE_SCREENSHOT === '1' ? { path } : {}),
    })
    expect(shot.subarray(1, 4).toString()).toBe('PNG')
    // the row's own button unblocks it (the page finds the key behind the label)
    await row.locator('button').click()
    await tab.waitForURL(/message=Reset/)
    expect((await fetch(`${base}/hit?key=user:9`)).status).toBe(200)
    expect(await rows.count()).toBe(1)
    expect(problems).toEqual([])
    await ctx.close()
  }, 90_000)

  it('works without JavaScript: look-up by peek and the threshold preview', async () => {
    const ctx = await context(false)
    const tab = await ctx.newPage()
    await tab.goto(`${base}/ops/limits/`)
    expect(await tab.locator('section.policy').count()).toBe(3)
    await tab.locator('input[name="key"]').first().fill('ip:10.0.0.7') // penalized past the hourly limit: refused for long
    await tab.locator('form[method="get"] button').click()
    const lookup = tab.locator('h2:has-text("Key") + table')
    expect(await lookup.locator('tbody tr').count()).toBe(3) // api + login's two policies
    expect(await lookup.textContent()).toContain('refused')
    await tab.locator('form[action$="/api/preview"] input[name="limit"]').fill('2')
    await tab.locator('form[action$="/api/preview"] button').click()
    await tab.waitForURL(/message=/)
    expect(await tab.locator('.msg').textContent()).toMatch(/A limit of 2 would have refused/)
    await ctx.close()
  }, 60_000)
})
