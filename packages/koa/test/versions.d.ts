// The aliased Koa majors and @koa/router 12 the tests run against share the types of `koa` and
// `@koa/router`.
declare module 'koa2' {
  import Koa from 'koa'
  export default Koa
}
declare module 'koa3' {
  import Koa from 'koa'
  export default Koa
}
declare module 'koa-router12' {
  import Router from '@koa/router'
  export default Router
}
