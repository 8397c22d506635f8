import { randomBytes } from 'node:crypto';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Decimal } from '../src/domain/decimal.js';
import { initialHealth, type Account } from '../src/domain/account.js';
import { newId } from '../src/domain/ids.js';
import { withDefaults } from '../src/domain/copy-rule.js';
import { AdapterRegistry } from '../src/engine/adapter-registry.js';
import { CopyEngine } from '../src/engine/copy-engine.js';
import { Dispatcher } from '../src/engine/dispatcher.js';
import type { MasterAction } from '../src/engine/actions.js';
import { planOpen, type SlaveContext } from '../src/engine/planner.js';
import { Store } from '../src/store/store.js';
import { CopyMetrics } from '../src/metrics/copy-metrics.js';
import { Registry } from 'prom-client';
import pg from 'pg';
import { STUB_SPEC, stubBroker } from '../test/helpers/stub-broker.js';
import { type SQL, sql } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { pgArray } from '../src/store/pg-array.js';
import { percentile, report, type Row } from './lib.js';

const PG_ADMIN_URL = process.env.TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

// Answered on the next turn of the event loop (see stubBroker): answered within the same tick, the first answers'
// ledger work (outcome rows, links, events: ~10 ms at 1000 Slaves) ran between the later hand-offs and was counted
// as overhead.
const stubFactory = (handoffs: { last: number; count: number }) =>
  stubBroker(() => {
    handoffs.last = performance.now();
    handoffs.count++;
  });

const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { p50: percentile(s, 50), p99: percentile(s, 99) };
};
const ms = (v: number) => Number(v.toFixed(2));

/** Statements the store sent, counted through its driver hook (BEGIN/COMMIT not counted). */
const counter = { n: 0 };

async function runSize(n: number, reps: number, databaseUrl: string | null, mainThread = false): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'ct-copybench-'));
  // fsync on: the default of the embedded store (each commit fdatasyncs its WAL on the host).
  const store = await Store.open({
    dataDir: dir,
    databaseUrl: databaseUrl ?? undefined,
    embeddedOnMainThread: mainThread,
    onStatement: () => {
      counter.n++;
    },
  });
  // BENCH_COPY_HEALTH=K: as in a running service, whose health monitor rewrites the health and funds of every live
  // account once a round (15 s) in slices of 100, a slice of K Slaves (the next K) written before each copy, not
  // timed. 100 to 150 is what falls between two copies of a Master trading every 1.5 to 2 s.
  const slice = Number(process.env.BENCH_COPY_HEALTH ?? 0);
  // The floor's session (its own connection on PostgreSQL), ended however the run ends.
  let floorDb: DurableFloor | null = null;
  const kind = `${databaseUrl ? 'postgres' : mainThread ? 'pglite on the main thread' : 'pglite'}${slice > 0 ? ` + health slices of ${slice}` : ''}`;
  try {
    const user = await store.users.create(`bench${n}@example.test`, 'x');
    const group = await store.accounts.createGroup(user.id, 'bench');
    const master = await store.accounts.create({
      userId: user.id,
      platform: 'sim',
      role: 'master',
      name: 'M',
      groupId: group.id,
      brokerAccountId: 'm',
      brokerAccountNumber: '1',
      balance: new Decimal(10000),
      equity: new Decimal(10000),
    });
    const slaves: Account[] = [];
    for (let i = 0; i < n; i++) {
      const s = await store.accounts.create({
        userId: user.id,
        platform: 'sim',
        role: 'slave',
        name: `S${i}`,
        groupId: group.id,
        brokerAccountId: `s${i}`,
        brokerAccountNumber: String(1000 + i),
        balance: new Decimal(10000),
        equity: new Decimal(10000),
      });
      await store.accounts.setRule(s.id, withDefaults({ sizing: { mode: 'multiplier', multiplier: '0.5' } }));
      slaves.push(s);
    }
    const handoffs = { last: 0, count: 0 };
    const adapters = new AdapterRegistry({ open: async () => null });
    adapters.register(stubFactory(handoffs));
    const engine = new CopyEngine(store, adapters, new Dispatcher());
    // The service's own observer (its Prometheus histograms), as the service wires it; the hop latencies it is told
    // are this bench's parts too. Read back from the ledger instead, the 1000 rows a copy were parsed between the
    // copies, and their garbage was collected inside the next one's window.
    const metrics = new CopyMetrics(new Registry());
    const hops = { plan: 0, record: 0, send: 0 };
    engine.observer = {
      recorded: (rows) => metrics.recorded(rows),
      answered: (platform, outcome, resend) => metrics.answered(platform, outcome, resend),
      settled: (platform, outcome, latency, attempt) => {
        metrics.settled(platform, outcome, latency, attempt);
        hops.plan = latency.plan ?? 0;
        hops.record = latency.record ?? 0;
        // Each send's `send` hop runs from the record's end to its hand-off to the adapter: the last one is the hand-off.
        hops.send = Math.max(hops.send, latency.send ?? 0);
      },
    };
    const action = (i: number): MasterAction => {
      const positionId = `mp${n}_${i}`;
      return {
        id: `${master.id}:${positionId}:open:1`,
        kind: 'open',
        masterAccountId: master.id,
        positionId,
        orderId: null,
        symbol: 'EURUSD',
        side: 'buy',
        type: 'market',
        volume: new Decimal('1.00'),
        prevVolume: null,
        price: new Decimal('1.10000'),
        stopLoss: new Decimal('1.09000'),
        takeProfit: null,
        at: Date.now(),
        item: {
          accountId: master.id,
          kind: 'position',
          itemId: positionId,
          symbol: 'EURUSD',
          side: 'buy',
          orderType: 'market',
          volume: new Decimal('1.00'),
          price: new Decimal('1.10000'),
        },
      };
    };

    // The floor's tables exist before the first copy; a trade id of their own (nothing reads them).
    floorDb = await durableFloor(
      databaseUrl ? await postgresFloorSession(databaseUrl) : embeddedFloorSession(store),
      newId('trd'),
      slaves,
    );
    const warm = Math.min(20, Math.ceil(reps / 5));
    const total: number[] = [];
    const plan: number[] = [];
    const record: number[] = [];
    const handoff: number[] = [];
    const outcomes: number[] = [];
    const before: number[] = [];
    const after: number[] = [];
    // How late the event loop ran a 1 ms timer while the copies ran: what a send, a fill or an HTTP answer
    // arriving then would have waited for (the store's SQL, when it runs on this thread).
    const loop = monitorEventLoopDelay({ resolution: 1 });
    // The collector's pauses (start, end) and each measured copy's window: the pauses that fell inside a window are
    // part of its overhead that no statement or function of ours shows.
    const pauses: Array<[number, number]> = [];
    const windows: Array<[number, number]> = [];
    // The heap's growth over each window: what the copy allocated there, where no collection ran inside it.
    const heapGrowth: number[] = [];
    const gcSeen = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) pauses.push([e.startTime, e.startTime + e.duration]);
    });
    gcSeen.observe({ entryTypes: ['gc'] });
    // BENCH_COPY_PROFILE=DIR: a CPU profile of this process over the measured copies only (not the seeding);
    // BENCH_COPY_HEAP_PROFILE=DIR: a sampling profile of what they allocated, collected objects included (the
    // garbage a copy leaves is what the collector's pauses inside later windows are made of).
    const heapDir = process.env.BENCH_COPY_HEAP_PROFILE;
    const profileDir = process.env.BENCH_COPY_PROFILE ?? heapDir;
    const profiler = profileDir ? new Session() : null;
    for (let i = 0; i < warm + reps; i++) {
      if (i === warm) loop.enable();
      if (i === warm && profiler) {
        profiler.connect();
        if (heapDir)
          await profiler.post('HeapProfiler.startSampling', {
            samplingInterval: 4096,
            includeObjectsCollectedByMajorGC: true,
            includeObjectsCollectedByMinorGC: true,
          });
        else {
          await profiler.post('Profiler.enable');
          await profiler.post('Profiler.start');
        }
      }
      if (slice > 0)
        await store.accounts.applyHealth(
          Array.from({ length: Math.min(slice, n) }, (_, k) => slaves[(i * slice + k) % n]!).map((sl) => ({
            id: sl.id,
            health: { ...initialHealth(), checkedAt: new Date().toISOString() },
            funds: { balance: new Decimal(10000), equity: new Decimal(10000 + (i % 50)) },
          })),
        );
      const a = action(i);
      handoffs.count = 0;
      hops.send = 0;
      const s0 = counter.n;
      const h0 = process.memoryUsage().heapUsed;
      const t0 = performance.now();
      const r = await engine.copy(master, a, { source: 'watcher' });
      // Handoffs happen in the dispatches started by copy(); they run before anything waits on I/O again.
      while (handoffs.count < n) await new Promise((res) => setImmediate(res));
      const elapsed = handoffs.last - t0;
      const h1 = process.memoryUsage().heapUsed;
      const s1 = counter.n;
      await r.done;
      const doneAt = performance.now();
      await engine.flush();
      const s2 = counter.n;
      // Not inside any window: the floor's writes between the copies, as many as the copies.
      await floorDb.sample(i >= warm);
      if (i < warm) continue;
      before.push(s1 - s0);
      after.push(s2 - s1);
      total.push(elapsed);
      windows.push([t0, handoffs.last]);
      heapGrowth.push((h1 - h0) / 1e6);
      plan.push(hops.plan);
      record.push(hops.record);
      handoff.push(hops.send);
      outcomes.push(doneAt - handoffs.last);
    }
    loop.disable();
    // Entries reach the observer on a later turn of the loop.
    await new Promise((res) => setImmediate(res));
    gcSeen.disconnect();
    const gcIn = windows.map(([a, b]) =>
      pauses.reduce((sum, [s, e]) => sum + Math.max(0, Math.min(b, e) - Math.max(a, s)), 0),
    );
    const allocated = heapGrowth.filter((_, k) => gcIn[k] === 0);
    if (profiler) {
      const { profile } = heapDir
        ? await profiler.post('HeapProfiler.stopSampling')
        : await profiler.post('Profiler.stop');
      const file = `copy-${kind.replace(/ /g, '-')}-${n}.${heapDir ? 'heapprofile' : 'cpuprofile'}`;
      writeFileSync(join(profileDir!, file), JSON.stringify(profile));
      profiler.disconnect();
    }
    const floors = floorDb.results();

    // The floor: the same planning (slave contexts, rules, sizing, tags, ledger rows) in memory, no store, no adapter.
    const rules = await store.accounts.rulesFor(slaves.map((s) => s.id));
    const contexts: SlaveContext[] = slaves.map((account) => ({
      account,
      rule: rules.get(account.id)!,
      spec: STUB_SPEC,
    }));
    const floor: number[] = [];
    let sink = 0;
    for (let i = 0; i < warm + reps; i++) {
      const a = action(i);
      const t0 = performance.now();
      const tradeId = newId('trd');
      const p = planOpen(
        {
          tradeId,
          masterAccount: master,
          symbol: a.symbol,
          side: a.side,
          type: 'market',
          volume: a.volume,
          price: null,
          stopLoss: a.stopLoss,
          takeProfit: null,
          at: a.at,
        },
        contexts,
        Date.now(),
      );
      const rows = p.map((x) => ({
        id: newId('int'),
        tradeId,
        slaveAccountId: x.slave.id,
        tag: x.tag,
        symbol: x.symbol,
        side: x.side,
        plannedVolume: x.kind === 'send' ? x.volume.toString() : null,
        state: x.kind === 'send' ? 'planned' : 'skipped',
      }));
      for (const r of rows) sink += r.tag.length;
      const elapsed = performance.now() - t0;
      if (i >= warm) floor.push(elapsed);
    }
    if (sink === 0) throw new Error('floor optimised away');

    const t = stats(total);
    const f = stats(floor);
    const target = n <= 100 ? 5 : 25;
    // Both floors are durable writes: PGlite's commit fdatasyncs its WAL on the host too (pglite-durable-fs.ts).
    const floorName = 'durable floor';
    const tag = (m: string) => `[${kind}] ${m}`;
    // A part of the copy overhead, from the ledger's hop latencies.
    const part = (what: string, xs: number[]): Row => {
      const p = stats(xs);
      return {
        slaves: n,
        measure: tag(`  of which: ${what}`),
        p50_ms: ms(p.p50),
        p99_ms: ms(p.p99),
        target: '',
        ok: '',
      };
    };
    return [
      {
        slaves: n,
        measure: tag('copy overhead: action received -> last order handed to adapter (durable intents, fsync on)'),
        p50_ms: ms(t.p50),
        p99_ms: ms(t.p99),
        target: `p99 <= ${target} ms`,
        ok: t.p99 <= target ? 'yes' : 'NO',
      },
      part('plan (slaves, rules, specs, sizing)', plan),
      part('record (trade + intents + item + events, one transaction)', record),
      part('hand-off (record done -> last send handed to the adapter)', handoff),
      part('garbage-collector pauses inside the window (any part above)', gcIn),
      {
        slaves: n,
        measure: tag(`heap allocated inside the window, MB (the ${allocated.length} windows without a collection)`),
        p50_ms: allocated.length > 0 ? ms(stats(allocated).p50) : 0,
        p99_ms: allocated.length > 0 ? ms(stats(allocated).p99) : 0,
        target: '',
        ok: '',
      },
      {
        // Not part of the overhead: what the Master's next action waits for (a watcher plans it only once this
        // one's copies have their outcomes, since a follow-up plans from the links they write).
        slaves: n,
        measure: tag('after it: last hand-off -> every outcome written (brokers answer on the next turn)'),
        p50_ms: ms(stats(outcomes).p50),
        p99_ms: ms(stats(outcomes).p99),
        target: '',
        ok: '',
      },
      {
        slaves: n,
        measure: tag('floor: same planning in memory (no store, no adapter)'),
        p50_ms: ms(f.p50),
        p99_ms: ms(f.p99),
        target: '',
        ok: '',
      },
      {
        slaves: n,
        measure: tag('overhead / floor (ratio of the p50s, of the p99s)'),
        p50_ms: ms(t.p50 / f.p50),
        p99_ms: ms(t.p99 / f.p99),
        target: '<= 10x',
        ok: `p50 ${t.p50 / f.p50 <= 10 ? 'yes' : 'NO'}, p99 ${t.p99 / f.p99 <= 10 ? 'yes' : 'NO'}`,
      },
      {
        slaves: n,
        measure: tag('event-loop delay while the copies ran (p99 | max)'),
        p50_ms: ms(loop.percentile(99) / 1e6),
        p99_ms: ms(loop.max / 1e6),
        target: 'no stall > 50 ms',
        ok: loop.max / 1e6 <= 50 ? 'yes' : 'NO',
      },
      {
        slaves: n,
        measure: tag('statements before the last hand-off (per order, max over the reps)'),
        p50_ms: stats(before).p50,
        p99_ms: Math.max(...before),
        target: '<= 3',
        ok: Math.max(...before) <= 3 ? 'yes' : 'NO',
      },
      {
        slaves: n,
        measure: tag('statements after it, outcomes until flushed (per order, max over the reps)'),
        p50_ms: stats(after).p50,
        p99_ms: Math.max(...after),
        target: 'independent of N',
        ok: '',
      },
      ...floors.map((x) => ({
        slaves: n,
        measure: tag(`${floorName}: ${x.what}`),
        p50_ms: ms(x.p50),
        p99_ms: ms(x.p99),
        target: '',
        ok: '',
      })),
      ...(floors.length > 0
        ? [
            {
              slaves: n,
              measure: tag(`copy overhead / ${floorName} (app statement into a PK-only table)`),
              p50_ms: ms(t.p50 / floors[0]!.p50),
              p99_ms: ms(t.p99 / floors[0]!.p99),
              target: '<= 2x',
              ok: t.p99 / floors[0]!.p99 <= 2 ? 'yes' : 'NO',
            },
          ]
        : []),
    ];
  } finally {
    await floorDb?.end();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Issue 3 figures: the copy engine's own overhead at 100 and 1000 Slaves on the embedded store. */
export async function benchCopyOverhead(): Promise<void> {
  const reps = Number(process.env.BENCH_COPY_REPS ?? 150);
  // BENCH_COPY_SIZES=10,100: other fan-outs (10 is the e2e bench's); a size past 100 gets a third of the reps.
  const sizes: Array<[number, number]> = (process.env.BENCH_COPY_SIZES ?? '100,1000')
    .split(',')
    .map(Number)
    .map((n) => [n, n > 100 ? Math.max(20, Math.round(reps / 3)) : reps]);
  // pglite-main: PGlite on the main thread as before its worker thread, measured beside it in the same run.
  const stores = (process.env.BENCH_COPY_STORES ?? 'pglite-main,pglite,postgres').split(',');
  const rows: Row[] = [];
  for (const [n, r] of sizes) {
    if (stores.includes('pglite-main')) rows.push(...(await runSize(n, r, null, true)));
    if (stores.includes('pglite')) rows.push(...(await runSize(n, r, null)));
  }
  if (stores.includes('postgres'))
    for (const [n, r] of sizes) {
      const db = await tempDatabase().catch(() => null);
      if (!db) {
        console.warn(`PostgreSQL not reachable at ${PG_ADMIN_URL}: embedded store only`);
        break;
      }
      try {
        rows.push(...(await runSize(n, r, db.url)));
      } finally {
        await db.drop();
      }
    }
  report('copy-overhead', rows, { reps, fsync: true, stores });
}

async function tempDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `copytrade_bench_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 1500 });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const u = new URL(PG_ADMIN_URL);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: PG_ADMIN_URL });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

/** Where the floor's statements run: one write of the rows, committed as the app's record is. */
interface FloorSession {
  run(text: string): Promise<void>;
  /** The statement, durable when it returns. */
  write(q: SQL): Promise<void>;
  end(): Promise<void>;
}

const dialect = new PgDialect();

/** PostgreSQL: BEGIN, the insert, COMMIT on one connection of its own. */
async function postgresFloorSession(url: string): Promise<FloorSession> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  return {
    run: async (text) => {
      await c.query(text);
    },
    write: async (q) => {
      const { sql: text, params } = dialect.sqlToQuery(q);
      await c.query('begin');
      await c.query(text, params);
      await c.query('commit');
    },
    end: () => c.end(),
  };
}

/**
 * The embedded store: the statement through the store's own PGlite (its worker thread), committed on its own,
 * as the app's record statement is there: the same round trip, parse, plan, execute and commit.
 */
function embeddedFloorSession(store: Store): FloorSession {
  const db = store.database.db;
  return {
    run: async (text) => {
      await db.execute(sql.raw(text));
    },
    write: async (q) => {
      await db.execute(q);
    },
    end: async () => undefined,
  };
}

/** The floor's samples, taken between the copies (see runSize). */
interface DurableFloor {
  /** One write of each target, round-robin; `keep` false while warming up. */
  sample(keep: boolean): Promise<void>;
  results(): Array<{ what: string; p50: number; p99: number }>;
  end(): Promise<void>;
}

/**
 * The durable floor in the same run as the copies, on the same store, sampled between them so that each copy and
 * its floor see the same machine (a floor taken after the copies, from fewer samples, compared p99s of different
 * minutes): N intent rows written in one statement and one commit into (a) a table with only the primary key,
 * (b) the same with copy_intents' other indexes, (c) copy_intents itself; and (d) a round trip that writes nothing
 * (`select 1`), the hop's own scatter.
 */
async function durableFloor(c: FloorSession, trade: string, slaves: Account[]): Promise<DurableFloor> {
  await c.run('create table floor_pk (like copy_intents including defaults)');
  await c.run('alter table floor_pk add primary key (id)');
  await c.run('create table floor_idx (like copy_intents including defaults including indexes)');
  const targets: Array<[string, string]> = [
    ['1 statement, 1 commit, PK-only table', 'floor_pk'],
    ['same into a table with the indexes of copy_intents (no FK)', 'floor_idx'],
    ['same into copy_intents (its indexes and FKs)', 'copy_intents'],
  ];
  const times = targets.map((): number[] => []);
  const hop: number[] = [];
  return {
    async sample(keep) {
      for (const [k, [, table]] of targets.entries()) {
        // The app's statement shape (store/repos/trades.ts, intentInsert): the columns that differ per row as one
        // array each, the others as one value. Built before the clock starts: the floor is the write alone.
        const q = sql`insert into ${sql.raw(table)} (id, slave_account_id, tag, trade_id, action, symbol, side, planned_volume, stop_loss, state)
          select u.id, u.slave_account_id, u.tag, ${trade}::text, 'open'::text, 'EURUSD'::text, 'buy'::text,
            '0.5'::numeric, '1.09'::numeric, 'planned'::text
          from unnest(${pgArray(slaves.map(() => newId('int')))}::text[], ${pgArray(slaves.map((s) => s.id))}::text[],
            ${pgArray(slaves.map(() => `fl${randomBytes(8).toString('hex')}`))}::text[]) as u(id, slave_account_id, tag)`;
        const t0 = performance.now();
        await c.write(q);
        if (keep) times[k]!.push(performance.now() - t0);
      }
      const t0 = performance.now();
      await c.run('select 1');
      if (keep) hop.push(performance.now() - t0);
    },
    results: () => [
      ...targets.map(([what], k) => ({ what: `${slaves.length} rows, ${what}`, ...stats(times[k]!) })),
      { what: 'a round trip writing nothing (select 1)', ...stats(hop) },
    ],
    end: () => c.end(),
  };
}
