import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { accountLeaseKey } from '../../src/domain/lease.js';
import { connectSimulator } from '../../src/demo/simulator-client.js';
import { startService } from '../../src/main.js';
import { Store } from '../../src/store/store.js';
import { cli, exited, firstJson, killStarted } from '../helpers/cli-process.js';
import { requirePostgres, tempDatabase } from '../helpers/postgres.js';
import { NATS_URL, requireNats } from '../helpers/nats.js';

const ready = (await requirePostgres()) && (await requireNats());

const TTL_MS = 3000;
const FINAL = ['confirmed', 'rejected', 'skipped', 'denied'];

async function until<T>(what: string, fn: () => Promise<T | undefined | null | false>, timeoutMs: number): Promise<T> {
  const end = performance.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The deployment as operations runs it: `copytrade simulator`, one `copytrade api` and two `copytrade worker`
 * processes on PostgreSQL and NATS. Orders go through the api; the worker owning the Master is SIGKILLed; the
 * other takes the lease over within its TTL and orders flow again. Every accepted order has exactly one ledger
 * row per Slave in a final state, and no Slave holds two copies of one order.
 */
describe.runIf(ready)('failover between worker processes', () => {
  let dir: string;
  let drop: () => Promise<void>;
  let store: Store;
  let env: Record<string, string>;
  let endpointsFile: string;
  let control: { url: string; token: string };
  let apiKey: string;
  let masterId: string;
  let slaveIds: string[];
  const workers = new Map<string, ChildProcess>();
  /** What each worker printed (its warnings: "leases lost", "work under lost leases stopped"), stderr and exit. */
  const printed = new Map<string, string[]>();
  let roleEnv: Record<string, string>;
  const startWorker = async () => {
    const w = cli(['worker', '--simulator', endpointsFile, '--json'], roleEnv);
    const lines: string[] = [];
    w.stdout?.on('data', (c) => lines.push(String(c)));
    // Node's own report of a crash (an unhandled error) goes to stderr, and the exit says the process is gone.
    w.stderr?.on('data', (c) => lines.push(`[stderr] ${String(c)}`));
    w.on('exit', (code, signal) => lines.push(`[exited with code ${code}, signal ${signal}]\n`));
    const id = (await firstJson<{ instanceId: string }>(w, 'instanceId')).instanceId;
    workers.set(id, w);
    printed.set(id, lines);
    return id;
  };
  let baseUrl: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ct-failover-'));
    const db = await tempDatabase();
    drop = db.drop;
    env = {
      DATABASE_URL: db.url,
      NATS_URL,
      COPYTRADE_SECRET_KEY: randomBytes(32).toString('base64'),
      COPYTRADE_BROKER_TIMEOUT_MS: '3000',
      LOG_LEVEL: 'warn',
    };
    const sim = cli(['simulator', '--data-dir', join(dir, 'sim'), '--json'], env);
    endpointsFile = (await firstJson<{ endpointsFile: string }>(sim, 'endpointsFile')).endpointsFile;
    control = JSON.parse(readFileSync(endpointsFile, 'utf8')).control;
    // The demo's accounts, made by a `serve` on the same store and brokers, which then stops.
    const seeder = await startService(
      loadConfig(
        { dataDir: ':memory:', port: '0', demo: true },
        // No bridge account: the EA link is served by `serve` only, never by the workers of a process deployment.
        { ...process.env, ...env, COPYTRADE_HEALTH_INTERVAL_MS: '0', COPYTRADE_DEMO_BRIDGE: '0' },
      ),
      false,
      { simulator: await connectSimulator(endpointsFile) },
    );
    apiKey = seeder.demo!.apiKey;
    await seeder.close();
    store = await Store.open({ dataDir: ':unused:', databaseUrl: db.url, migrate: false });
    const all = await store.accounts.all();
    const master = all.find((a) => a.role === 'master' && a.name === 'Demo Master')!;
    masterId = master.id;
    slaveIds = all.filter((a) => a.role === 'slave' && a.groupId === master.groupId).map((a) => a.id);
    roleEnv = { ...env, COPYTRADE_LEASE_TTL_MS: String(TTL_MS) };
    await startWorker();
    await startWorker();
    const api = cli(['api', '--port', '0', '--simulator', endpointsFile, '--json'], roleEnv);
    baseUrl = (await firstJson<{ baseUrl: string }>(api, 'baseUrl')).baseUrl;
  }, 180_000);

  afterAll(async () => {
    killStarted();
    await store?.close();
    await drop?.();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const order = async () => {
    const res = await fetch(`${baseUrl}/v1/accounts/${masterId}/orders`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ symbol: 'EURUSD', side: 'buy', volume: 0.1 }),
    });
    return { status: res.status, body: (await res.json()) as { tradeId: string; code?: string } };
  };

  const settled = async (tradeId: string) => {
    const rows = await store.trades.intentsOfTrade(tradeId);
    return rows.length === slaveIds.length && rows.every((r) => FINAL.includes(r.state)) ? rows : null;
  };

  const positionsOf = async (simAccountId: string) => {
    const res = await fetch(`${control.url}/accounts/${encodeURIComponent(simAccountId)}/positions`, {
      headers: { authorization: `Bearer ${control.token}` },
    });
    return (await res.json()) as Array<{ id: string; tag: string | null }>;
  };

  const accepted: string[] = [];
  const dead = new Set<string>();

  /** Every accepted order: one ledger row per Slave in a final state; at the brokers one position per confirmed copy. */
  const checkLedger = async () => {
    let confirmed = 0;
    for (const id of accepted) {
      const rows = await until(`trade ${id} settled`, () => settled(id), 30_000);
      expect(new Set(rows.map((r) => r.slaveAccountId))).toEqual(new Set(slaveIds));
      expect(rows).toHaveLength(slaveIds.length);
      confirmed += rows.filter((r) => r.state === 'confirmed').length;
    }
    expect(confirmed).toBeGreaterThan(0);
    // No tag twice at the brokers (no duplicate copy), and every Slave position is a confirmed copy.
    const { held, late, unexplained } = await atBrokers();
    const tags = held.map((p) => p.tag).filter((t) => t !== null);
    expect(new Set(tags).size).toBe(tags.length);
    expect(unexplained).toEqual([]);
    expect(late).toEqual([]);
    expect(held.length).toBe(confirmed);
    return confirmed;
  };

  /**
   * Every Slave position at the simulated brokers, and those that are late originals: a tag of an earlier attempt
   * of a copy settled under a new tag, the write of a process paused after it passed its lease check, landed once
   * it woke (see docs/scale-out.md).
   */
  const atBrokers = async () => {
    const sims = await (await connectSimulator(endpointsFile)).accounts();
    const masterSim = sims.find((s) => s.meta.demoKey === 'master')!.id;
    const held = (await Promise.all(sims.filter((s) => s.id !== masterSim).map((s) => positionsOf(s.id)))).flat();
    const rows = (await Promise.all(accepted.map((id) => store.trades.intentsOfTrade(id)))).flat();
    const current = new Set(rows.filter((r) => r.state === 'confirmed').map((r) => r.tag));
    const earlier = new Set(rows.flatMap((r) => (r.prevTags as string[] | null) ?? []));
    const late = held.filter((p) => p.tag && !current.has(p.tag) && earlier.has(p.tag));
    const unexplained = held.filter((p) => !p.tag || (!current.has(p.tag) && !earlier.has(p.tag)));
    return { held, late, unexplained };
  };

  /** Orders until one is accepted (503 while nobody holds the Master); returns it and how many were refused. */
  const orderUntilAccepted = async (budgetMs = TTL_MS * 5) => {
    let refused = 0;
    const id = await until(
      'an order accepted by the new owner',
      async () => {
        const r = await order();
        if (r.status === 202) return r.body.tradeId;
        expect([503, 409]).toContain(r.status);
        refused++;
        return null;
      },
      budgetMs,
    );
    accepted.push(id);
    return { id, refused };
  };

  it('SIGKILL of the worker owning the Master: the other takes over once the lease ran out and settled, nothing doubled or lost', async () => {
    for (let i = 0; i < 3; i++) {
      const r = await order();
      expect(r.status, JSON.stringify(r.body)).toBe(202);
      accepted.push(r.body.tradeId);
    }
    const owner = (await store.leases.get(accountLeaseKey(masterId)))!.owner;
    const victim = workers.get(owner)!;
    expect(victim).toBeDefined();

    const killedAt = performance.now();
    victim.kill('SIGKILL');
    dead.add(owner);
    // Not before it is gone: an order published in the instant before the signal lands is lost with the process
    // and answered 409 write_outcome_unknown after the api's wait (that case is the settle loop's, not this test's).
    await exited(victim);
    // Orders while nobody holds the Master are refused (503, nothing sent) until the takeover; then accepted.
    const { id: first, refused } = await orderUntilAccepted();
    await until('the first order after the kill copied', () => settled(first), 30_000);
    const failoverMs = performance.now() - killedAt;
    const lease = (await store.leases.get(accountLeaseKey(masterId)))!;
    expect(lease.owner).not.toBe(owner);
    expect(lease.epoch).toBeGreaterThanOrEqual(2);

    for (let i = 0; i < 3; i++) {
      const r = await order();
      expect(r.status, JSON.stringify(r.body)).toBe(202);
      accepted.push(r.body.tradeId);
    }
    const confirmed = await checkLedger();
    console.log(
      `failover: process kill -> first order after it copied ${Math.round(failoverMs)} ms, lease TTL ${TTL_MS} ms, ` +
        `${refused} orders refused meanwhile, ${accepted.length} orders, ${confirmed} copies`,
    );
  }, 120_000);

  it('a worker paused (SIGSTOP) past its lease mid-fan-out: the ledger stays one row per Slave, it lets go on SIGCONT, and no Slave keeps an extra position', async () => {
    const paused = [...workers.keys()].find((id) => !dead.has(id))!;
    expect((await store.leases.get(accountLeaseKey(masterId)))?.owner).toBe(paused);
    const successor = await startWorker();
    // An order, and the pause while its copies are on the wire.
    const r = await order();
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    accepted.push(r.body.tradeId);
    const w = workers.get(paused)!;
    // What it holds as it is stopped (key at epoch): none of it may stay its own once it wakes.
    const heldBefore = (await store.leases.live())
      .filter((l) => l.owner === paused && !l.key.startsWith('worker:'))
      .map((l) => `${l.key}@${l.epoch}`);
    expect(heldBefore.length).toBeGreaterThan(0);
    w.kill('SIGSTOP');
    try {
      await until(
        'the successor holding the Master',
        async () => (await store.leases.get(accountLeaseKey(masterId)))?.owner === successor,
        TTL_MS * 5,
      );
      // A paused worker still subscribes to the Master's orders: until the successor serves them too, a request
      // reaches only the sleeper and is answered 409 write_outcome_unknown after the api's wait (16 s here).
      await orderUntilAccepted(45_000);
      for (let i = 0; i < 2; i++) {
        const o = await order();
        expect(o.status, JSON.stringify(o.body)).toBe(202);
        accepted.push(o.body.tradeId);
      }
    } finally {
      w.kill('SIGCONT');
    }
    // Awake: its next renewal is refused and it lets go of everything.
    const continued = performance.now();
    const said = (line: string) => async () => printed.get(paused)!.join('').includes(line);
    // What the sleeper did since it woke tells why a wait failed: its log's end goes with the failure.
    const withTail = (err: Error) => {
      const tail = printed.get(paused)!.join('').split('\n').slice(-40).join('\n');
      throw new Error(`${err.message}; the paused worker's last lines:\n${tail}`);
    };
    await until('the paused worker noticing it lost its leases', said('leases lost'), TTL_MS * 5).catch(withTail);
    const noticedMs = performance.now() - continued;
    // Its watch of the lost Master ends once the job it was on has its outcomes: a copy it had on the wire when
    // stopped waits for the broker's answer or the adapter's timeout, so this is bounded by those, not by the TTL.
    await until('the paused worker stopping the work under them', said('work under lost leases stopped'), 60_000).catch(
      withTail,
    );
    const stoppedMs = performance.now() - continued;
    // A write it had passed its gate for before the stop may still land as it wakes; the successor's reconcile
    // (told by the sleeper once its writes ended) closes it. Bounded: the api's 16 s wait is not involved here.
    const woke = performance.now();
    await until('no late original left at the brokers', async () => (await atBrokers()).late.length === 0, 30_000);
    const closedMs = performance.now() - woke;
    await checkLedger();
    // None of the leases it held when stopped is its own any more. Awake, it is a live worker again: it may since
    // have been handed its share, under newer epochs, after the successor drained them.
    const stillHeld = (await store.leases.live())
      .filter((l) => l.owner === paused)
      .map((l) => `${l.key}@${l.epoch}`)
      .filter((k) => heldBefore.includes(k));
    expect(stillHeld).toEqual([]);
    // Late originals the successor closed: each a drift event of a duplicate copy (and a close heal's ledger row).
    const drift = (await store.events.allAfter(0, 100_000)).filter(
      (e) => e.type === 'reconcile.drift_found' && (e.payload as { kind?: string }).kind === 'duplicate_copy',
    );
    // Every copy the sleeper had not sent when stopped was resent by the successor: those it did not send on waking
    // were refused at its write gate; the others are the late originals above.
    const rows = (await Promise.all(accepted.map((id) => store.trades.intentsOfTrade(id)))).flat();
    const resent = rows.filter((r) => ((r.prevTags as string[] | null) ?? []).length > 0).length;
    console.log(
      `SIGSTOP: leases lost ${Math.round(noticedMs)} ms and their work stopped ${Math.round(stoppedMs)} ms after SIGCONT; ${resent} copies resent by the successor; ` +
        `${drift.length} late original writes of the sleeper landed and were closed by its successor; ` +
        `brokers clean ${Math.round(closedMs)} ms after the sleeper woke`,
    );
  }, 120_000);
});
