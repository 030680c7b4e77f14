// graphile-worker for tests/libraries/test_graphile_worker.py. `node graphile.js
// setup|worker|view|unlock WORKER`, with LIB_DSN and LIB_BLOCK in the environment; setup and view print
// one JSON line.
const fs = require('fs')
const { run, makeWorkerUtils } = require('graphile-worker')

const mode = process.argv[2]
const connectionString = process.env.LIB_DSN
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

async function main () {
  if (mode === 'worker') {
    await run({
      connectionString,
      concurrency: 1,
      pollInterval: 200,
      noHandleSignals: true,
      taskList: {
        ok: async () => {},
        boom: async () => { throw new Error('boom on purpose') },
        sleepy: async () => {
          while (fs.existsSync(process.env.LIB_BLOCK)) await sleep(100)
        }
      }
    })
    return
  }
  const utils = await makeWorkerUtils({ connectionString })
  try {
    if (mode === 'setup') {
      await utils.migrate()
      // Two named queues: 'orders' (run one at a time, as graphile-worker runs a named
      // queue) and 'mailers'. An hour ahead on each: waiting, not yet due.
      const orders = { queueName: 'orders' }
      const hour = new Date(Date.now() + 3600 * 1000)
      for (let n = 0; n < 3; n++) await utils.addJob('ok', { n }, orders)
      for (let n = 0; n < 2; n++) await utils.addJob('boom', {}, { ...orders, maxAttempts: 1 })
      const stuck = await utils.addJob('sleepy', {}, { ...orders, maxAttempts: 2 })
      await utils.addJob('ok', { n: 99 }, { ...orders, runAt: hour })
      // No worker knows 'later': these wait.
      for (let n = 0; n < 3; n++) await utils.addJob('later', {}, { queueName: 'mailers' })
      await utils.addJob('later', {}, { queueName: 'mailers', runAt: hour })
      console.log(JSON.stringify({ stuck: stuck.id }))
    } else if (mode === 'unlock') {
      // graphile-worker's own release of a dead worker's jobs (and their named queues).
      await utils.forceUnlockWorkers([process.argv[3]])
      console.log(JSON.stringify({ unlocked: process.argv[3] }))
    } else {
      // graphile-worker's own view of its jobs (the graphile_worker.jobs view).
      const rows = await utils.withPgClient((client) => client.query(
        `SELECT count(*) FILTER (WHERE locked_at IS NOT NULL)::int AS locked,
                count(*) FILTER (WHERE locked_at IS NULL AND attempts >= max_attempts)::int AS failed,
                count(*) FILTER (WHERE locked_at IS NULL AND attempts < max_attempts)::int AS waiting,
                array_agg(id::text) FILTER (WHERE locked_at IS NOT NULL) AS locked_ids,
                max(locked_by) AS locked_by,
                count(*)::int AS total
         FROM graphile_worker.jobs`))
      // Per named queue: waiting and due now (run_at passed), waiting ahead, locked, failed.
      const queues = await utils.withPgClient((client) => client.query(
        `SELECT queue_name,
                count(*) FILTER (WHERE locked_at IS NULL AND attempts < max_attempts
                                 AND run_at <= now())::int AS due,
                count(*) FILTER (WHERE locked_at IS NULL AND attempts < max_attempts
                                 AND run_at > now())::int AS ahead,
                count(*) FILTER (WHERE locked_at IS NOT NULL)::int AS locked,
                count(*) FILTER (WHERE locked_at IS NULL AND attempts >= max_attempts)::int AS failed
         FROM graphile_worker.jobs GROUP BY queue_name`))
      const perQueue = {}
      for (const row of queues.rows) perQueue[row.queue_name] = row
      console.log(JSON.stringify({ ...rows.rows[0], queues: perQueue }))
    }
  } finally {
    await utils.release()
  }
}

main().catch((err) => { console.error(err); process.exit(1) })
