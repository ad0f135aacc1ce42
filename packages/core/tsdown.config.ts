import { packageBuild } from '../../tsdown.base.ts'

export default packageBuild([
  'src/index.ts',
  'src/http/index.ts',
  'src/fetch/index.ts',
  'src/testing.ts',
  'src/otel.ts',
  'src/shed/index.ts',
])
