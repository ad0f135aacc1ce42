import { packageBuild } from '../../tsdown.base.ts'

// Named entries: each subpath's dist file (package.json `exports`) stays where it was whatever
// folder its source lives in.
export default packageBuild({
  index: 'src/index.ts',
  'http/index': 'src/http/index.ts',
  'fetch/index': 'src/fetch/index.ts',
  testing: 'src/testing/index.ts',
  otel: 'src/observability/otel/index.ts',
  'shed/index': 'src/shed/index.ts',
})
