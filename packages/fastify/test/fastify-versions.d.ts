// The aliased Fastify majors the tests run against share the `fastify` types (and so the
// plugin's declarations); at run time each is its own major.
declare module 'fastify4' {
  import fastify from 'fastify'
  export default fastify
}
declare module 'fastify5' {
  import fastify from 'fastify'
  export default fastify
}
