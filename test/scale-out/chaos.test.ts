import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountLeaseKey } from '../../src/domain/lease.js';
import { SCHEDULED_LEASE } from '../../src/roles/worker.js';
import { until } from '../helpers/cli-process.js';
import { auditCopies } from '../helpers/copy-audit.js';
import { type Deployment, startDeployment } from '../helpers/deployment.js';
import {
  type FlowingDeployment,
  type LedgerProbe,
  type MasterFlow,
  startFlowingDeployment,
} from '../helpers/master-flow.js';
import { ownNatsBinary, type OwnNats, startOwnNats } from '../helpers/own-nats.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { ownPostgresAvailable, type OwnPostgres, startOwnPostgres } from '../helpers/own-postgres.js';

/** Its own PostgreSQL and NATS servers, which it restarts: never the machine's shared ones. In CI they must run. */
const ready = ownPostgresAvailable() && ownNatsBinary() !== null;
if (!ready && process.env.CI) throw new Error('chaos: CI needs PostgreSQL server binaries and nats-server');
if (!ready) console.warn('chaos: no PostgreSQL server binaries or nats-server here: skipped (it runs in CI)');

/** Short for many kills in the budget, long enough that a busy machine's renewals still land in time. */
const TTL_MS = 4000;
/** CI runs the short run (5 rounds); `npm run chaos` the long one (30 rounds, figures in docs/scale-out.md). */
const KILLS = Number(process.env.CHAOS_KILLS ?? 5);
/**
 * The whole test's budget is this much per kill (plus the start and the audit): 22 kills took 218 s alone at load 2
 * and over 360 s at load 10 or more beside other process tests, with nothing stuck. Each wait inside is bounded on
 * its own (the Master held again in 30 s, copies flowing in 90 s), so a real hang still fails there, by name.
 */
const KILL_BUDGET_MS = 30_000;
/**
 * Kill kinds in turn; every seventh round is a panic-close of the group with its runner killed mid-way. A
 * `quick-gap` round opens a Master position at its broker, kills the Master's worker and closes the position before
 * any successor holds the lease: only the Master's deal history shows it happened. A `pause` round SIGSTOPs the
 * Master's worker mid-fan-out until the other worker holds the Master, then lets it run on (its writes past the lease
 * must not land twice); an `api-kill` round SIGKILLs the api under the flow and starts another. `CHAOS_SEED` rotates
 * the order.
 */
const BASE_KINDS = [
  'mid-fan-out',
  'quick-gap',
  'pause',
  'api-kill',
  'panic',
  'standby',
  'new-ledger-row',
  'mid-fan-out',
  'quick-gap',
];
const SEED = Number(process.env.CHAOS_SEED ?? 0);
const KINDS = BASE_KINDS.map((_, i) => BASE_KINDS[(i + SEED) % BASE_KINDS.length]!);

/**
 * Issue 11's chaos test: a simulator, one api and two worker processes on PostgreSQL and NATS (through a TCP proxy
 * the test cuts), a steady flow of Master activity (api orders, and trades made at the Master's broker directly)
 * onto 20 Slaves on platforms A, B and C, while workers are SIGKILLed and restarted at 22 points chosen from
 * observed progress (copies on the wire, a new ledger row, a panic-close under way). At the end every Master
 * action has one ledger row per Slave in a final state, no Slave order is doubled or lost, and every Slave holds
 * the Master's positions as its rule sizes them.
 */
describe.runIf(ready)('chaos: SIGKILLed workers and a cut NATS connection under a steady flow', () => {
  let proxy: TcpProxy;
  let ownPg: OwnPostgres;
  let ownNats: OwnNats;
  let d: Deployment;
  let probe: LedgerProbe;
  let flow: MasterFlow;
  let apiBase: string;

  let fd: FlowingDeployment | undefined;

  beforeAll(async () => {
    [ownPg, ownNats] = await Promise.all([startOwnPostgres(), startOwnNats()]);
    const nats = new URL(ownNats.url);
    proxy = await startTcpProxy({ host: nats.hostname, port: Number(nats.port) });
    fd = await startFlowingDeployment(
      () =>
        startDeployment({
          natsUrl: `nats://127.0.0.1:${proxy.port}`,
          leaseTtlMs: TTL_MS,
          slavesPerPlatform: 6,
          pgAdminUrl: ownPg.url,
        }),
      { workers: 2, together: true },
    );
    ({ d, probe, flow, apiBase } = fd);
  }, 120_000);

  afterAll(async () => {
    await fd?.close();
    await proxy?.close();
    await Promise.all([ownNats?.destroy(), ownPg?.destroy()]);
  });

  const masterOwned = () => until('a live worker holding the Master', async () => !!(await d.masterOwner()), 30_000);
  /** Copies flow again: an action recorded after `since` fully copied. */
  const flowing = (since: Date) =>
    until('copies flowing again', async () => (await probe.copiedSince(since)) > 0, 90_000);

  /** The replacement of the last worker killed, starting while the survivor takes over. */
  let replacement: Promise<string> = Promise.resolve('');
  /** The last worker stopped (killed or paused): when, and the account keys it held then. */
  let lastVictim: { at: number; date: Date; keys: string[]; owner: string } | null = null;
  /** Workers killed so far: a lease of theirs still live is nobody's. */
  const killed = new Set<string>();
  const victimise = async (owner: string) => {
    const keys = (await d.store.leases.live()).filter((l) => l.owner === owner && l.key.startsWith('account:'));
    lastVictim = { at: performance.now(), date: new Date(), keys: keys.map((l) => l.key), owner };
  };
  /**
   * Issue 43's takeover figure: from the kill (or pause) until every account the victim held is held by another
   * live worker. Null when no worker was stopped since the last call.
   */
  const takenOver = async (): Promise<{ ms: number; at: Date } | null> => {
    const v = lastVictim;
    lastVictim = null;
    if (!v) return null;
    const keys = new Set(v.keys);
    await until(
      `the ${keys.size} accounts of the stopped worker held by another`,
      async () => {
        const owners = new Map((await d.store.leases.live()).map((l) => [l.key, l.owner]));
        return [...keys].every((k) => {
          const o = owners.get(k);
          // A replacement counts from its first lease on (it is in `d.workers` only once its start is over).
          return o !== undefined && o !== v.owner && !killed.has(o);
        });
      },
      30_000,
      25,
    );
    return { ms: performance.now() - v.at, at: new Date() };
  };
  /** Then until the successor's first copy: a copy of this Master confirmed after the takeover. */
  const firstCopyAfter = async (at: Date): Promise<number> => {
    await until(
      'the first copy after the takeover',
      async () =>
        (
          await probe.query<{ n: number }>(
            `select count(*)::int n from copy_intents ci join trades t on t.id = ci.trade_id
             where t.master_account_id = $1 and ci.state = 'confirmed' and ci.updated_at >= $2`,
            [d.masterId, at],
          )
        )[0]!.n > 0,
      90_000,
      100,
    );
    return Date.now() - at.getTime();
  };
  /** A panic round's takeover, measured as soon as its runner is killed (its copies wait for the resume). */
  let panicTakeover: { ms: number; at: Date } | null = null;
  /** Waits for `seen` (polled fast), then SIGKILLs `victim()` and starts a replacement worker. */
  const killWhen = async (seen: () => Promise<boolean>, victim: () => Promise<string | undefined>) => {
    await replacement;
    const end = Date.now() + 15_000;
    while (!(await seen()) && Date.now() < end) await new Promise((r) => setTimeout(r, 25));
    const v = await victim();
    const id = v && d.workers.has(v) ? v : [...d.workers.keys()][0]!;
    await victimise(id);
    killed.add(id);
    await d.stopWorker(id, 'SIGKILL');
    replacement = d.startWorker();
  };

  const panicRound = async (kills: string[]) => {
    await flow.pause();
    const res = await fetch(`${apiBase}/v1/copier-groups/${d.groupId}/panic-close`, {
      method: 'POST',
      headers: { authorization: `Bearer ${d.apiKey}`, prefer: 'respond-async' },
    });
    const job = (await res.json()) as { jobId?: string; id?: string };
    expect([200, 202], JSON.stringify(job)).toContain(res.status);
    const jobId = job.jobId ?? job.id!;
    const before = (await d.positionsOf(d.masterSimId)).length;
    // Mid-panic-close: the first close seen at the Master's broker, then its runner (scheduled lease) is killed.
    await killWhen(
      async () => (await d.positionsOf(d.masterSimId)).length < before,
      () => d.ownerOf(SCHEDULED_LEASE),
    );
    kills.push('mid-panic-close');
    panicTakeover = await takenOver();
    let state = '';
    let error: string | null = null;
    await until(
      'the panic-close job finished by the successor',
      async () => {
        const r = await fetch(`${apiBase}/v1/panic-close-jobs/${jobId}`, {
          headers: { authorization: `Bearer ${d.apiKey}` },
        });
        const body = (await r.json()) as { state: string; error?: string | null };
        state = body.state;
        error = body.error ?? null;
        return state !== 'running';
      },
      60_000,
    );
    expect(state, `panic-close job ${jobId}: ${error}`).toBe('succeeded');
    for (const id of [d.masterId, ...d.slaves.map((s) => s.id)]) {
      const r = await fetch(`${apiBase}/v1/accounts/${id}/resume`, {
        method: 'POST',
        headers: { authorization: `Bearer ${d.apiKey}` },
      });
      expect(r.status).toBe(200);
    }
    flow.resume();
  };

  const natsCut = async () => {
    // Not while a replacement starts: a worker exits 1 at start when NATS is unreachable (no retry of the first
    // connection), which is the operator's supervisor's to handle, not this test's.
    await replacement;
    proxy.cut();
    // Cut until the api process has noticed (an order refused), then restored; orders are accepted again after.
    await until('an order refused while NATS is cut', async () => (await flow.apiOrder()) !== 202, 15_000);
    proxy.restore();
    const answers: string[] = [];
    const t0 = performance.now();
    await until(
      'an order accepted once NATS is back',
      async () => {
        const status = await flow.apiOrder();
        answers.push(`${status}@${Math.round(performance.now() - t0)}ms`);
        return status === 202;
      },
      30_000,
      // Not faster: at every 50 ms the api's own order rate limit answered 429 from the tenth second on, and the
      // orders it let through were refused anyway while its NATS client reconnected (seen twice, 30 s of 503/429).
      250,
    ).catch((err: Error) => {
      throw new Error(`${err.message}; answers after the restore: ${answers.join(' ')}; owner ${d.masterId}`);
    });
  };

  it(
    `${KILLS} SIGKILLs (mid-fan-out, a quick trade in the gap, after a ledger row, the standby, mid-panic-close) and a NATS cut every eighth round: nothing doubled or lost`,
    async () => {
      const started = Date.now();
      const flowStart = new Date(started - 1000);
      const kills: string[] = [];
      const failovers: number[] = [];
      const takeovers: number[] = [];
      const firstCopies: number[] = [];
      flow.start();
      await flowing(new Date(0));
      for (let i = 0; kills.length < KILLS; i++) {
        const kind = KINDS[i % KINDS.length]!;
        const since = new Date();
        const t0 = performance.now();
        if (kind === 'panic') await panicRound(kills);
        else if (kind === 'pause') {
          await replacement;
          const end = Date.now() + 15_000;
          while (!((await probe.open()) > 0) && Date.now() < end) await new Promise((r) => setTimeout(r, 25));
          const paused = (await d.masterOwner()) ?? [...d.workers.keys()][0]!;
          await victimise(paused);
          d.pauseWorker(paused);
          try {
            await until(
              'the other worker holding the Master',
              async () => {
                const o = await d.masterOwner();
                return o !== undefined && o !== paused;
              },
              30_000,
            );
          } finally {
            d.resumeWorker(paused);
          }
          kills.push(kind);
        } else if (kind === 'api-kill') {
          await d.killApi(apiBase);
          apiBase = await d.startApi();
          flow.setApi(apiBase);
          kills.push(kind);
        } else if (kind === 'quick-gap') {
          await flow.pause();
          await replacement;
          const owner = await d.masterOwner();
          const opened = await flow.directOpen();
          const victim = owner && d.workers.has(owner) ? owner : [...d.workers.keys()][0]!;
          await victimise(victim);
          killed.add(victim);
          await d.stopWorker(victim, 'SIGKILL');
          await flow.directCloseId(opened);
          replacement = d.startWorker();
          kills.push(kind);
          flow.resume();
        } else if (kind === 'standby') {
          await killWhen(
            async () => true,
            async () => {
              const owner = await d.masterOwner();
              return [...d.workers.keys()].find((w) => w !== owner);
            },
          );
          kills.push(kind);
        } else {
          const trades = await probe.trades();
          await killWhen(
            kind === 'mid-fan-out' ? async () => (await probe.open()) > 0 : async () => (await probe.trades()) > trades,
            () => d.masterOwner(),
          );
          kills.push(kind);
        }
        const over = kind === 'panic' ? panicTakeover : await takenOver();
        const taken = over && {
          takeover: over.ms,
          firstCopy: kind === 'panic' ? Number.NaN : await firstCopyAfter(over.at),
        };
        await masterOwned();
        const owned = performance.now() - t0;
        await flowing(since);
        failovers.push(performance.now() - t0);
        if (taken) {
          takeovers.push(taken.takeover);
          if (!Number.isNaN(taken.firstCopy)) firstCopies.push(taken.firstCopy);
        }
        console.log(
          `kill ${kills.length} (${kind}) at ${(over ? new Date(over.at.getTime() - over.ms) : since).toISOString()}: ` +
            (taken
              ? `accounts held again ${Math.round(taken.takeover)} ms after the kill, first copy ${Math.round(taken.firstCopy)} ms after that; `
              : '') +
            `Master held again after ${Math.round(owned)} ms, copies flowing after ${Math.round(failovers.at(-1)!)} ms (from the round's start)`,
        );
        if (i % 8 === 7) await natsCut();
      }
      // The servers under everything, restarted while orders and hand-made trades keep coming.
      const restarts: string[] = [];
      for (const [name, restart] of [
        ['NATS', () => ownNats.restart()],
        ['PostgreSQL', () => ownPg.restart()],
      ] as const) {
        await replacement;
        const since = new Date();
        const t0 = performance.now();
        await restart();
        await flowing(since);
        restarts.push(
          `${name} at ${since.toISOString()}: copies flowing ${Math.round(performance.now() - t0)} ms after the restart began`,
        );
      }
      await flow.stop();
      // The last round's replacement worker is up before the audit (and never left starting at teardown).
      await replacement;
      const audit = await auditCopies(d, probe, 90_000, flowStart);
      const lag = audit.slaveCloseLagMs;
      console.log(
        `chaos: ${kills.length} kills (${JSON.stringify(count(kills))}), ${Math.round((Date.now() - started) / 1000)} s, ` +
          `flow ${JSON.stringify(flow.counts)}, kill -> copies flowing p50 ${Math.round(pct(failovers, 0.5))} ms ` +
          `max ${Math.round(Math.max(...failovers))} ms, takeover p50 ${Math.round(pct(takeovers, 0.5))} ms ` +
          `max ${Math.round(Math.max(...takeovers))} ms over ${takeovers.length}, first copy after it p50 ` +
          `${Math.round(pct(firstCopies, 0.5))} ms max ${Math.round(Math.max(...firstCopies))} ms, Slave close lag p50 ${pct(lag, 0.5)} p99 ${pct(lag, 0.99)} ` +
          `max ${lag.at(-1)} ms over ${lag.length}; ${restarts.join('; ')}; audit ${JSON.stringify({ ...audit, offRule: audit.offRule.length, slaveCloseLagMs: lag.length, slowCloses: audit.slowCloses.length })}`,
      );
      console.log(
        `chaos: Slave closes later than 5 s after their Master's (${audit.slowCloses.length}): ${audit.slowCloses.slice(0, 40).join('; ')}`,
      );
      if (audit.offRule.length > 0) {
        // What became of the copies a Slave lacks: their links (closed why, when) and the rows about them.
        const open = (await d.positionsOf(d.masterSimId)).map((p) => p.id);
        const links = await probe.query(
          `select l.master_position_id, l.slave_account_id, l.slave_position_id, l.open, l.closed_reason, l.created_at,
           l.closed_at from position_links l where l.master_account_id = $1 and l.master_position_id = any($2)
           and l.closed_reason is not null order by l.closed_at`,
          [d.masterId, open],
        );
        const rows = await probe.query(
          `select t.master_position_id, t.action, ci.slave_account_id, ci.state, ci.skip_reason, ci.tag, ci.attempts,
           ci.created_at, ci.updated_at from copy_intents ci join trades t on t.id = ci.trade_id
           where t.master_account_id = $1 and t.master_position_id = any($2) order by ci.updated_at`,
          [d.masterId, open],
        );
        console.log(`chaos: off rule; closed links of open Master positions ${JSON.stringify(links)}`);
        console.log(`chaos: their rows ${JSON.stringify(rows)}`);
      }
      if (audit.unfinished.length > 0) {
        // Rows that never ended: their trade, their state history, who holds the leases, and what the workers said.
        const ids = [...new Set(audit.unfinished.map((u) => u.split(/[/:]/)[0]!))];
        const stuck = await probe.query(
          `select t.id, t.action, t.source, t.status, t.master_position_id, t.created_at as trade_at,
           t.updated_at as trade_upd, ci.slave_account_id, ci.state, ci.skip_reason, ci.attempts, ci.created_at,
           ci.updated_at from copy_intents ci join trades t on t.id = ci.trade_id where t.id = any($1)
           order by ci.created_at limit 8`,
          [ids],
        );
        console.log(`chaos: the unfinished rows' trades now (${new Date().toISOString()}): ${JSON.stringify(stuck)}`);
        console.log(`chaos: leases ${JSON.stringify(await d.store.leases.live())}`);
        console.log(`chaos: workers' warnings and errors:\n${d.workerLog.slice(-150).join('\n')}`);
      }
      expect(flow.errors).toEqual([]);
      // A worker whose lease the store refuses mid-order answers 409 write_outcome_unknown (the new owner settles the
      // trade by its tag; the audit above shows such orders neither lost nor doubled), never a 500.
      expect(flow.oddAnswers).toEqual([]);
      expect(kills.length).toBeGreaterThanOrEqual(Math.min(20, KILLS));
      // The kinds this seed's rounds planned (a panic round counts as its mid-panic-close kill).
      const planned = Array.from({ length: KILLS }, (_, i) => KINDS[i % KINDS.length]!);
      if (planned.includes('panic')) expect(kills).toContain('mid-panic-close');
      expect(audit.unfinished).toEqual([]);
      expect(audit.doubleRows).toEqual([]);
      expect(audit.missingRows).toEqual([]);
      expect(audit.duplicateTags).toEqual([]);
      expect(audit.unexplained).toEqual([]);
      expect(audit.offRule).toEqual([]);
      // Counted from the Master's broker: every position it opened or closed has a row per Slave, the quick gaps too.
      expect(audit.masterActionsWithoutRows).toEqual([]);
      if (planned.includes('quick-gap')) expect(kills).toContain('quick-gap');
      expect(audit.confirmed).toBeGreaterThan(Math.min(100, KILLS * 10));
      expect((await d.store.leases.get(accountLeaseKey(d.masterId)))!.epoch).toBeGreaterThanOrEqual(KILLS / 2);
    },
    Number(process.env.CHAOS_TIMEOUT_MS ?? 60_000 + KILLS * KILL_BUDGET_MS),
  );
});

const count = (xs: string[]) => Object.fromEntries([...new Set(xs)].map((x) => [x, xs.filter((y) => y === x).length]));
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.floor(p * (xs.length - 1))]!;
