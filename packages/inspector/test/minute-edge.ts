// The '1m' top list and refusal count are the current minute's summary: refusals made across the
// turn of a minute are split between two. A test that reads them starts clear of that turn: within
// 10 s of it, it waits for it (a busy machine's few local decisions take well under 10 s).
export async function clearOfMinuteEdge(): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000)
  if (left < 10_000) await new Promise((resolve) => setTimeout(resolve, left + 50))
}
