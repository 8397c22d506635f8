import { Decimal } from '../../src/domain/decimal.js';
import type { Deployment } from './deployment.js';
import type { LedgerProbe } from './master-flow.js';

const WAITING = ['pending', 'unresolved', 'recorded'];

export interface CopyAudit {
  trades: number;
  byStatus: Record<string, number>;
  rows: number;
  confirmed: number;
  /** (trade, Slave) pairs with more than one ledger row. */
  doubleRows: string[];
  /** Open actions the Master made (trade accepted) lacking a row for some Slave. */
  missingRows: string[];
  /** Rows not in a final state, trades still waiting for their fan-out. */
  unfinished: string[];
  /** Slave positions at the brokers: tags held twice, and positions no confirmed copy explains. */
  duplicateTags: string[];
  unexplained: string[];
  /** Slaves whose positions differ from the Master's open positions times their multiplier. */
  offRule: string[];
  positions: number;
}

const FINAL = new Set(['confirmed', 'rejected', 'skipped', 'denied']);

/**
 * The end state a process-level fault test asserts: every Master action has exactly one ledger row per Slave in a
 * final state, no Slave order twice at the brokers, nothing unexplained, and every Slave holds the Master's open
 * positions scaled by its rule. Waits (bounded) for the ledger to settle and the Slaves to match first, since
 * the settle loop and the reconciler may still be finishing what a kill left.
 */
export async function auditCopies(d: Deployment, probe: LedgerProbe, withinMs: number): Promise<CopyAudit> {
  const end = Date.now() + withinMs;
  const poll = async (ok: () => Promise<boolean>) => {
    while (!(await ok()) && Date.now() < end) await new Promise((r) => setTimeout(r, 250));
  };
  await poll(async () => {
    const waiting = await probe.query<{ n: number }>(
      'select count(*)::int n from trades where master_account_id = $1 and status = any($2)',
      [d.masterId, WAITING],
    );
    return waiting[0]!.n === 0 && (await probe.open()) === 0;
  });
  const offRule = async (): Promise<string[]> => {
    const master = await d.positionsOf(d.masterSimId);
    const out: string[] = [];
    for (const s of d.slaves) {
      const want = master.map((p) => new Decimal(p.volume).times(s.multiplier).toFixed(2)).sort();
      const held = (await d.positionsOf(s.simId)).map((p) => new Decimal(p.volume).toFixed(2)).sort();
      if (want.join() !== held.join())
        out.push(`${s.platform} ${s.id} x${s.multiplier}: want [${want}] holds [${held}]`);
    }
    return out;
  };
  await poll(async () => (await offRule()).length === 0);

  const rows = await probe.query<{
    trade_id: string;
    action: string;
    status: string;
    slave: string | null;
    state: string | null;
    tag: string | null;
    prev_tags: string[] | null;
  }>(
    `select t.id trade_id, t.action, t.status, ci.slave_account_id slave, ci.state, ci.tag, ci.prev_tags
     from trades t left join copy_intents ci on ci.trade_id = t.id where t.master_account_id = $1`,
    [d.masterId],
  );
  const trades = new Map<string, { action: string; status: string; slaves: string[] }>();
  const unfinished: string[] = [];
  for (const r of rows) {
    const t = trades.get(r.trade_id) ?? { action: r.action, status: r.status, slaves: [] };
    trades.set(r.trade_id, t);
    if (r.slave) t.slaves.push(r.slave);
    if (r.state && !FINAL.has(r.state)) unfinished.push(`${r.trade_id}/${r.slave}: ${r.state}`);
  }
  const byStatus: Record<string, number> = {};
  const doubleRows: string[] = [];
  const missingRows: string[] = [];
  const slaveIds = d.slaves.map((s) => s.id);
  for (const [id, t] of trades) {
    const key = `${t.action}/${t.status}`;
    byStatus[key] = (byStatus[key] ?? 0) + 1;
    if (WAITING.includes(t.status)) unfinished.push(`${id}: trade ${t.status}`);
    const seen = new Set<string>();
    for (const s of t.slaves)
      if (seen.has(s)) doubleRows.push(`${id}/${s}`);
      else seen.add(s);
    if (t.action === 'open' && t.status === 'accepted')
      for (const s of slaveIds) if (!seen.has(s)) missingRows.push(`${id}/${s}`);
  }

  const current = new Set(rows.filter((r) => r.state === 'confirmed').map((r) => r.tag));
  const held = (await Promise.all(d.slaves.map((s) => d.positionsOf(s.simId)))).flat();
  const tags = held.map((p) => p.tag).filter((t): t is string => t !== null);
  const counted = new Map<string, number>();
  for (const t of tags) counted.set(t, (counted.get(t) ?? 0) + 1);
  return {
    trades: trades.size,
    byStatus,
    rows: rows.filter((r) => r.slave).length,
    confirmed: rows.filter((r) => r.state === 'confirmed').length,
    doubleRows,
    missingRows,
    unfinished,
    duplicateTags: [...counted].filter(([, n]) => n > 1).map(([t]) => t),
    unexplained: held.filter((p) => !p.tag || !current.has(p.tag)).map((p) => `${p.id} ${p.tag}`),
    offRule: await offRule(),
    positions: held.length,
  };
}
