// One limiter without a `name` on several routes counts each route on its own: a review found
// that a migrating user's shared `authLimiter` (one budget in express-rate-limit) let 15 logins
// through at a limit of 5 over three routes, and a limiter under `/posts/:postId` gave each post
// id a fresh budget, with no word. The limiter now says so once (LIMITER_PER_ROUTE).
import express, { Router } from 'express'
import request from 'supertest'
import { describe, expect, it } from 'vitest'
import { warningsDuring } from '../../../test-support/adapter-helpers.js'
import { rateLimit } from '../src/index.js'

describe('LIMITER_PER_ROUTE', () => {
  it('one unnamed limiter on two routes warns once, naming both routes', async () => {
    const warnings = await warningsDuring(async () => {
      const app = express()
      const auth = rateLimit({ limit: 5, window: '15m' })
      app.post('/login', auth, (_req, res) => void res.send('ok'))
      app.post('/reset', auth, (_req, res) => void res.send('ok'))
      for (const path of ['/login', '/login', '/reset', '/reset', '/login'])
        expect((await request(app).post(path)).status).toBe(200)
    })
    expect(warnings.map((w) => w.code)).toEqual(['LIMITER_PER_ROUTE'])
    expect(warnings[0]?.message).toContain('"POST /login" and on "POST /reset"')
    expect(warnings[0]?.message).toContain('give the limiter a `name`')
  })

  it('a mount path with parameters warns on the second value', async () => {
    const warnings = await warningsDuring(async () => {
      const app = express()
      const posts = Router()
      posts.use(rateLimit({ limit: 3, window: '1m' }))
      posts.get('/', (_req, res) => void res.send('ok'))
      app.use('/posts/:postId', posts)
      expect((await request(app).get('/posts/1')).status).toBe(200)
      expect((await request(app).get('/posts/2')).status).toBe(200)
    })
    expect(warnings.map((w) => w.code)).toEqual(['LIMITER_PER_ROUTE'])
    expect(warnings[0]?.message).toContain('"/posts/1" and on "/posts/2"')
  })

  it('a named limiter, one route, or warnings: false stay quiet', async () => {
    const warnings = await warningsDuring(async () => {
      const app = express()
      const named = rateLimit({ limit: 5, window: '15m', name: 'auth-shared' })
      app.post('/a', named, (_req, res) => void res.send('ok'))
      app.post('/b', named, (_req, res) => void res.send('ok'))
      const quiet = rateLimit({ limit: 5, window: '15m', warnings: false })
      app.post('/c', quiet, (_req, res) => void res.send('ok'))
      app.post('/d', quiet, (_req, res) => void res.send('ok'))
      const one = rateLimit({ limit: 5, window: '15m' })
      app.post('/e', one, (_req, res) => void res.send('ok'))
      for (const path of ['/a', '/b', '/c', '/d', '/e', '/e'])
        expect((await request(app).post(path)).status).toBe(200)
    })
    expect(warnings).toEqual([])
  })
})
