// The aliased Express majors the tests run against share @types/express.
declare module 'express4' {
  import express from 'express'
  export default express
}
declare module 'express5' {
  import express from 'express'
  export default express
}
