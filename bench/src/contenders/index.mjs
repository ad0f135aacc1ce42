// Every in-process contender: ours, the peers, and the reference points.
import { OURS } from './ours.mjs'
import { PEER_CONTENDERS, PEER_NAMES } from './peers.mjs'
import { REFERENCES } from './reference.mjs'

export { PEER_NAMES }

/** All contenders, Redis ones first. */
export const CONTENDERS = [...OURS, ...PEER_CONTENDERS, ...REFERENCES].sort(
  (a, b) => (a.store === 'redis' ? 0 : 1) - (b.store === 'redis' ? 0 : 1),
)
