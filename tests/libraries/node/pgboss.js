// pg-boss for tests/libraries/test_pg_boss.py. `node pgboss.js setup|worker|view`, with
// LIB_DSN and LIB_BLOCK in the environment; setup and view print one JSON line.
const fs = require('fs')
const PgBoss = require('pg-boss')

const mode = process.argv[2]
// `worker recover` also runs pg-boss's maintenance every second: it fails an active job past
// its expire_in and retries it (the way pg-boss recovers a dead worker's job).
const recover = process.argv[3] === 'recover'
const boss = new PgBoss({
  connectionString: process.env.LIB_DSN,
  supervise: recover,
  maintenanceIntervalSeconds: 1,
  schedule: false,
  migrate: mode === 'setup'
})
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

async function main () {
  await boss.start()
  if (mode === 'setup') {
    await boss.createQueue('work')
    await boss.createQueue('idle')
    for (let n = 0; n < 3; n++) await boss.send('work', { kind: 'ok', n })
    for (let n = 0; n < 2; n++) await boss.send('work', { kind: 'boom' }, { retryLimit: 0 })
    // Fails once, then waits an hour for its retry (state 'retry', start_after ahead).
    await boss.send('work', { kind: 'boom' }, { retryLimit: 1, retryDelay: 3600 })
    // An hour ahead on each queue: 'created', not yet due.
    await boss.send('work', { kind: 'ok', n: 99 }, { startAfter: 3600 })
    await boss.send('idle', { kind: 'later' }, { startAfter: 3600 })
    const stuck = await boss.send('work', { kind: 'sleepy' }, { retryLimit: 1, expireInSeconds: 2 })
    for (let n = 0; n < 3; n++) await boss.send('idle', { kind: 'later' })
    console.log(JSON.stringify({ stuck }))
    await boss.stop({ graceful: false, wait: true })
  } else if (mode === 'worker') {
    await boss.work('work', { pollingIntervalSeconds: 0.5, batchSize: 1 }, async ([job]) => {
      if (job.data.kind === 'boom') throw new Error('boom on purpose')
      while (job.data.kind === 'sleepy' && fs.existsSync(process.env.LIB_BLOCK)) await sleep(100)
    })
  } else {
    // pg-boss's own counts: getQueueSize (jobs before 'active') and getJobById.
    const waiting = await boss.getQueueSize('idle')
    const states = {}
    const rows = await boss.getDb().executeSql(
      'SELECT state::text AS state, count(*)::int AS n FROM pgboss.job GROUP BY 1')
    for (const row of rows.rows) states[row.state] = row.n
    const stuck = process.argv[3] ? await boss.getJobById('work', process.argv[3]) : null
    // Per queue: getQueueSize (every job before 'active', due or not), and its fetch's own
    // condition for a job it would take now (state < 'active' AND start_after < now()).
    const queues = {}
    for (const name of ['work', 'idle']) {
      const size = await boss.getQueueSize(name)
      const due = await boss.getDb().executeSql(
        "SELECT count(*) FILTER (WHERE state < 'active' AND start_after < now())::int AS due," +
        " count(*) FILTER (WHERE state = 'created' AND start_after >= now())::int AS ahead," +
        " count(*) FILTER (WHERE state = 'retry' AND start_after >= now())::int AS retry," +
        " count(*) FILTER (WHERE state = 'active')::int AS active," +
        " count(*) FILTER (WHERE state = 'failed')::int AS failed" +
        ' FROM pgboss.job WHERE name = $1', [name])
      queues[name] = { size, ...due.rows[0] }
    }
    console.log(JSON.stringify({ waiting, states, stuck_state: stuck && stuck.state, queues }))
    await boss.stop({ graceful: false, wait: true })
  }
}

main().catch((err) => { console.error(err); process.exit(1) })
