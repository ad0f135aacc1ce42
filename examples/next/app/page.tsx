export default function Home() {
  return <p>GET /api/hello (3 a minute per client) and /api/limited (2 a minute, in proxy.ts).</p>
}
