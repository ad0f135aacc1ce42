// The aliased Express 4 the tests also run against shares @types/express.
declare module 'express4' {
  import express from 'express'
  export default express
}
