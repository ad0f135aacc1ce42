// Traffic shapes for `pnpm simulate`: when each request is sent, in whole ms from the chart's 0.

/** Every `stepMs` from `fromMs` (inclusive) to `toMs` (exclusive). */
function every(stepMs, fromMs, toMs) {
  const out = []
  for (let t = fromMs; t < toMs; t += stepMs) out.push(t)
  return out
}

/** `count` requests `gapMs` apart from `fromMs`. */
function burst(count, fromMs, gapMs) {
  return Array.from({ length: count }, (_, i) => fromMs + i * gapMs)
}

/**
 * A rate that climbs from 0 to `peak` per second over each `periodMs`, then drops to 0: request
 * k of a period goes out when the area under the ramp reaches k + 1/2.
 */
function sawtooth(peak, periodMs, periods) {
  const perPeriod = (peak * periodMs) / 2000
  const out = []
  for (let p = 0; p < periods; p++)
    for (let k = 0; k < perPeriod; k++)
      out.push(p * periodMs + Math.round(periodMs * Math.sqrt((k + 0.5) / perPeriod)))
  return out
}

/**
 * The shapes, for a policy of 10 per 1 s. `lengthMs`: the chart's time axis; `sent`: request
 * times in ms, ascending; `note`: one line under the title saying what was sent.
 */
export const SHAPES = [
  {
    name: 'steady',
    title: 'steady rate above the limit',
    note: '20 per s for 4 s, evenly spaced',
    lengthMs: 4000,
    sent: every(50, 0, 4000),
  },
  {
    name: 'burst-after-idle',
    title: 'burst after idle',
    note: '5 per s, idle 1 s, 25 within 50 ms at 2 s, then 20 per s',
    lengthMs: 4000,
    sent: [...every(200, 0, 1000), ...burst(25, 2000, 2), ...every(50, 2100, 4000)],
  },
  {
    name: 'sawtooth',
    title: 'sawtooth',
    note: 'the rate climbs from 0 to 40 per s over each second, then drops',
    lengthMs: 4000,
    sent: sawtooth(40, 1000, 4),
  },
  {
    name: 'boundary-burst',
    title: 'boundary burst',
    note: '1 at 0 s, then 15 in the 100 ms before the 1 s edge and 15 in the 100 ms after',
    lengthMs: 2500,
    sent: [0, ...burst(15, 900, 6), ...burst(15, 1000, 6)],
  },
  {
    name: 'edge-then-steady',
    title: 'burst at a window end, then steady',
    note: '15 in the 100 ms before the 1 s edge, then 20 per s',
    lengthMs: 3000,
    sent: [...burst(15, 900, 6), ...every(50, 1000, 3000)],
  },
]
