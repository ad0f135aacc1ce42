// The store contract on MemoryStore, and on RedisStore with every supported client library
// (ioredis, node-redis 4, 5, 6) on standalone Redis and on a local Redis Cluster (3 masters,
// 1 replica each). The servers are shared; each client gets its own connection.
import { afterAll, beforeAll } from 'vitest'
import {
  type RedisCluster,
  type RedisProcess,
  startCluster,
  startRedis,
} from '../../../test-support/redis.js'
import { MemoryStore, RedisStore } from '../src/index.js'
import { CLIENT_VARIANTS, CLIENTS, type TestClient } from './setup/clients.js'
import { describeStoreContract } from './store-contract.js'

let server: RedisProcess
let cluster: RedisCluster
const opened: TestClient[] = []
const standalone = new Map<string, TestClient>()
const clustered = new Map<string, TestClient>()

beforeAll(async () => {
  ;[server, cluster] = await Promise.all([startRedis(), startCluster(3, 1)])
  const masters = cluster.startupNodes.slice(0, 3).map((n) => n.port)
  for (const factory of CLIENTS) {
    const one = await factory.standalone(server.port)
    const many = await factory.cluster(masters)
    standalone.set(factory.name, one)
    clustered.set(factory.name, many)
    opened.push(one, many)
  }
  for (const factory of CLIENT_VARIANTS) {
    const one = await factory.standalone(server.port)
    standalone.set(factory.name, one)
    opened.push(one)
  }
}, 120_000)

afterAll(async () => {
  await Promise.all(opened.map((c) => c.close()))
  await Promise.all([server?.stop(), cluster?.stop()])
})

const clientOf = (map: Map<string, TestClient>, name: string) => {
  const found = map.get(name)
  if (found === undefined)
    throw new Error(`no ${name} client: the servers are there only inside tests`)
  return found.client
}

describeStoreContract('MemoryStore', () => new MemoryStore())
for (const { name } of CLIENTS) {
  describeStoreContract(
    `RedisStore on ${name} (standalone)`,
    () => new RedisStore({ client: clientOf(standalone, name) }),
  )
  describeStoreContract(
    `RedisStore on ${name} (cluster)`,
    () => new RedisStore({ client: clientOf(clustered, name) }),
  )
}
for (const { name } of CLIENT_VARIANTS) {
  describeStoreContract(
    `RedisStore on ${name} (standalone)`,
    () => new RedisStore({ client: clientOf(standalone, name) }),
  )
}
