import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cli, firstJson, killStarted, track } from '../helpers/cli-process.js';

/**
 * kill -9 of the real service at random instants while orders are on their way, against the simulated
 * brokers in their own process (they outlive the service, as a real broker does). After the last restart has
 * settled: every Master position at the broker belongs to exactly one order-route trade, every Slave holds
 * exactly the copies its ledger confirms, and no copy was made twice or outside the order's own trade.
 * `KILL_ROUNDS` sets the number of kills (default 4, to keep CI bounded; run it with more for a figure).
 */
const ROUNDS = Number(process.env.KILL_ROUNDS ?? 4);
const dir = mkdtempSync(join(tmpdir(), 'ct-kill9-'));

afterAll(() => {
  killStarted();
  if (process.env.KILL9_KEEP) console.log(`kill -9: data kept in ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
});

interface Summary {
  baseUrl: string;
  v1BaseUrl: string;
  demo: { apiKey: string };
  simulator: { pid: number } | null;
}

async function serve(): Promise<{ child: ChildProcess; s: Summary }> {
  const child = cli(['serve', '--demo', '--port', '0', '--data-dir', dir, '--json']);
  const s = await firstJson<Summary>(child, 'baseUrl');
  if (s.simulator) track(s.simulator.pid);
  return { child, s };
}

const kill = (child: ChildProcess) =>
  new Promise<void>((r) => {
    if (child.exitCode !== null || child.signalCode !== null) return r();
    child.once('exit', () => r());
    child.kill('SIGKILL');
  });

async function api<T = any>(
  s: Summary,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const res = await fetch(s.v1BaseUrl + path, {
    method,
    headers: { authorization: `Bearer ${s.demo.apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as T };
}

describe('kill -9 while orders are on their way', () => {
  it(`${ROUNDS} kills at random instants: no copy twice, none lost`, {
    timeout: 120_000 + ROUNDS * 60_000,
  }, async () => {
    let cur = await serve();
    const accounts = (
      await api<{ accounts: Array<{ id: string; name: string; role: string; groupId: string }> }>(
        cur.s,
        'GET',
        '/v1/accounts',
      )
    ).body.accounts;
    const master = accounts.find((a) => a.name === 'Demo Master')!;
    const slaves = accounts.filter((a) => a.groupId === master.groupId && a.role === 'slave');
    const answers: number[] = [];
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;

    for (let round = 0; round < ROUNDS; round++) {
      // Two orders in flight, then the kill somewhere between 50 ms and 2.5 s later: before the Master's fill, between
      // the fill and its record, mid-fan-out or after.
      const inflight = [0, 1].map(() =>
        api(cur.s, 'POST', `/v1/accounts/${master.id}/orders`, {
          symbol: 'EURUSD',
          side: rand() < 0.5 ? 'buy' : 'sell',
          volume: 0.1,
        }).then(
          (r) => answers.push(r.status),
          () => answers.push(0),
        ),
      );
      await new Promise((r) => setTimeout(r, 50 + Math.floor(rand() * 2500)));
      await kill(cur.child);
      await Promise.all(inflight);
      cur = await serve();
    }

    // The last life settles everything the kills left: no trade waits for its Master's outcome any more.
    type Trade = {
      tradeId: string;
      status: string;
      source: string;
      action: string;
      master: { positionId: string | null };
    };
    const trades = async () => (await api<{ trades: Trade[] }>(cur.s, 'GET', '/v1/trades?limit=200')).body.trades;
    const end = Date.now() + 90_000;
    while (
      (await trades()).some((t) => t.status === 'pending' || (t.status === 'unresolved' && t.master.positionId)) &&
      Date.now() < end
    )
      await new Promise((r) => setTimeout(r, 500));

    const all = await trades();
    const extra = all.filter((t) => t.source !== 'api');
    expect(
      extra.map(
        (t) =>
          `${t.source} ${t.action} ${t.master.positionId}: ${(t as any).copies.map((c: any) => `${c.action} ${c.outcome}`).join(', ')}`,
      ),
    ).toEqual([]);
    const positionsOf = async (id: string) =>
      (await api<{ positions: Array<{ id: string }> }>(cur.s, 'GET', `/v1/accounts/${id}/positions`)).body.positions;
    const masterPositions = await positionsOf(master.id);
    const accepted = all.filter((t) => t.status === 'accepted');
    // Each Master position is one accepted trade's, and each accepted trade has its Master position.
    expect(accepted.map((t) => t.master.positionId).sort()).toEqual(masterPositions.map((p) => p.id).sort());

    const ledgers = await Promise.all(
      accepted.map(
        async (t) =>
          (
            await api<{ copies: Array<{ accountId: string; outcome: string; brokerPositionId: string | null }> }>(
              cur.s,
              'GET',
              `/v1/trades/${t.tradeId}`,
            )
          ).body,
      ),
    );
    for (const slave of slaves) {
      const held = (await positionsOf(slave.id)).map((p) => p.id).sort();
      const rows = ledgers.flatMap((l) => (l.copies ?? []).filter((c) => c.accountId === slave.id));
      // One ledger row per accepted trade and Slave, each final.
      expect(rows).toHaveLength(accepted.length);
      expect(rows.filter((r) => !['confirmed', 'skipped', 'rejected', 'denied'].includes(r.outcome))).toEqual([]);
      expect(
        rows
          .filter((r) => r.outcome === 'confirmed')
          .map((r) => r.brokerPositionId)
          .sort(),
      ).toEqual(held);
    }
    console.log(
      `kill -9: ${ROUNDS} kills, ${answers.filter((s) => s === 202).length} orders answered 202, ${answers.filter((s) => s === 0).length} cut by the kill, ${accepted.length} Master positions copied, duplicates 0, losses 0`,
    );
    await kill(cur.child);
  });
});
