// Limited in proxy.ts, before it gets here.
export const dynamic = 'force-dynamic'

export function GET(): Response {
  return Response.json({ ok: true })
}
