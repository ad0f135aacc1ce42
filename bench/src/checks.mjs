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

function flagTwoLimits(row) {
  if (row.skip) return undefined
  if (row.errors > 0) return `${row.errors} errors (${row.firstError})`
  if (row.allowedShare < 0.999)
    return `allowed only ${(row.allowedShare * 100).toFixed(1)}% where every request should pass: these figures measure something else`
  return undefined
}

// The quota phase: ours must admit what its limits allow and leave nothing counted for a refusal.
function flagQuota(row) {
  const q = row.quota
  if (q === undefined) return undefined
  if (q.error) return `quota phase failed: ${q.error}`
  if (q.slow)
    return `a burst took ${q.maxBurstMs.toFixed(0)} ms: it may have crossed a 1 s window, so its counts are not exact`
  if (row.owner === 'ours' && q.burnedTotal !== 0)
    return `refused requests left ${q.burnedTotal} units counted: must be 0`
  if (row.owner === 'ours' && q.admitted !== q.ideal)
    return `admitted ${q.admitted} where the limits allow ${q.ideal}`
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

function flagEvents(row) {
  if (row.uncounted) return `the bridge missed ${row.uncounted} decisions`
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
  for (const row of results.twoLimits ?? []) {
    row.warning = flagTwoLimits(row)
    if (row.warning) notes.push(`${row.id}, two limits: ${row.warning}`)
    row.quotaWarning = flagQuota(row)
    if (row.quotaWarning) notes.push(`${row.id}, two limits, quota phase: ${row.quotaWarning}`)
  }
  for (const row of [...results.memory, ...results.slidingLog]) {
    row.warning = flagMemory(row)
    if (row.warning)
      notes.push(`${row.id}, memory${row.limit ? ` (limit ${row.limit})` : ''}: ${row.warning}`)
  }
  for (const row of results.events ?? []) {
    const warning = flagEvents(row)
    if (warning) notes.push(`events, ${row.store}, ${row.label}: ${warning}`)
  }
  for (const row of results.http) {
    row.warning = flagHttp(row)
    if (row.warning)
      notes.push(`HTTP ${row.framework} ${row.variant} (${row.mode}): ${row.warning}`)
  }
  return notes
}
