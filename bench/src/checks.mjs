// Sanity checks: a row whose limiter did not do what the scenario needs is flagged, not trusted.

function flagDecision(row) {
  const share = `${(row.allowedShare * 100).toFixed(1)}%`
  if (row.errors > 0) return `${row.errors} errors (${row.firstError})`
  if ((row.scenario === 'distinct' || row.scenario === 'busy') && row.allowedShare < 0.999) {
    return `allowed only ${share} where every request should pass: these figures measure something else`
  }
  if (row.scenario === 'hot' && row.allowedShare > 0.01 && row.owner !== 'reference') {
    return `allowed ${share} of a hot key far over its limit`
  }
  return undefined
}

function flagMemory(row) {
  if (row.errors > 0) return `${row.errors} errors during the fill`
  if (row.allowedShare < 1)
    return `refused ${((1 - row.allowedShare) * 100).toFixed(1)}% of the fill`
  if (row.redisKeysPerKey < 0.99)
    return `only ${row.redisKeysPerKey.toFixed(2)} Redis keys per user key: keys expired during the fill`
  return undefined
}

function flagHttp(row) {
  if (row.skip) return undefined
  if (row.errors > 0) return `${row.errors} connection errors or timeouts`
  if (row.mode === 'pass' && row.non2xxShare > 0.001)
    return `${(row.non2xxShare * 100).toFixed(1)}% non-2xx with limits that should pass`
  if (row.mode === 'limited' && row.non2xxShare < 0.9)
    return `only ${(row.non2xxShare * 100).toFixed(1)}% limited`
  return undefined
}

/** Sets `warning` on every suspicious row and returns one note per warning. */
export function checkResults(results) {
  const notes = []
  for (const row of results.decisions) {
    row.warning = flagDecision(row)
    if (row.warning)
      notes.push(`${row.id}, ${row.scenario}, ${row.inFlight} in flight: ${row.warning}`)
  }
  for (const row of [...results.memory, ...results.slidingLog]) {
    row.warning = flagMemory(row)
    if (row.warning)
      notes.push(`${row.id}, memory${row.limit ? ` (limit ${row.limit})` : ''}: ${row.warning}`)
  }
  for (const row of results.http) {
    row.warning = flagHttp(row)
    if (row.warning)
      notes.push(`HTTP ${row.framework} ${row.variant} (${row.mode}): ${row.warning}`)
  }
  return notes
}
