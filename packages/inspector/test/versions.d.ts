// The aliased Express 4, Fastify 4 and Koa 2 the tests also run against share the newer types.
declare module 'express4' {
  import express from 'express'
  export default express
}
// Likewise Fastify 4 (the `fastify` types) and Koa 2 (the `koa` types).
declare module 'fastify4' {
  import fastify from 'fastify'
  export default fastify
}
declare module 'koa2' {
  import Koa from 'koa'
  export default Koa
}
