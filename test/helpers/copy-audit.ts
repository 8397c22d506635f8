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
  /**
   * Counted from the Master's own books (the simulator's deals since `since`), not from our ledger: each Master
   * position opened, and each closed, that lacks a trade with a row for every Slave ("position P open: no row for S").
   */
  masterActionsWithoutRows: string[];
  /** Skipped rows by reason code (`closed_before_copy` for what happened while no worker watched). */
  skipped: Record<string, number>;
  /** Per Slave copy closed after its Master position closed: ms from the Master's closing deal to the Slave's. */
  slaveCloseLagMs: number[];
  /** The slowest of them (above 5 s): when the Master closed, which Slave, how late (to place them on a timeline). */
  slowCloses: string[];
}

const FINAL = new Set(['confirmed', 'rejected', 'skipped', 'denied']);

/**
 * The end state a process-level fault test asserts: every Master action has exactly one ledger row per Slave in a
 * final state, no Slave order twice at the brokers, nothing unexplained, and every Slave holds the Master's open
 * positions scaled by its rule. Waits (bounded) for the ledger to settle and the Slaves to match first, since
 * the settle loop and the reconciler may still be finishing what a kill left.
 */
export async function auditCopies(
  d: Deployment,
  probe: LedgerProbe,
  withinMs: number,
  /** Master positions opened before this are not counted by the book checks (the demo's own). */
  since = new Date(0),
): Promise<CopyAudit> {
  const end = Date.now() + withinMs;
  const poll = async (ok: () => Promise<boolean>) => {
    while (!(await ok()) && Date.now() < end) await new Promise((r) => setTimeout(r, 250));
  };
  const settled = async () => {
    const waiting = await probe.query<{ n: number }>(
      'select count(*)::int n from trades where master_account_id = $1 and status = any($2)',
      [d.masterId, WAITING],
    );
    return waiting[0]!.n === 0 && (await probe.open()) === 0;
  };
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
  // Both at once: the reconciler heals a Slave that lacks a copy with a new trade, whose rows are planned and on the
  // wire for a moment after the Slave's books already match (read then, they looked unfinished).
  await poll(async () => (await settled()) && (await offRule()).length === 0 && (await settled()));

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
    ...(await fromTheBooks(d, probe, since)),
  };
}

/** What the Master's broker recorded, held against the ledger: every action has its rows, and how late Slaves closed. */
async function fromTheBooks(
  d: Deployment,
  probe: LedgerProbe,
  since: Date,
): Promise<Pick<CopyAudit, 'masterActionsWithoutRows' | 'slaveCloseLagMs' | 'slowCloses' | 'skipped'>> {
  const deals = (await d.dealsOf(d.masterSimId)).filter((x) => Date.parse(x.time) >= since.getTime());
  const covered = await probe.query<{ position: string; action: string; slaves: string[] }>(
    `select t.master_position_id position, t.action, array_agg(distinct ci.slave_account_id) slaves
     from trades t join copy_intents ci on ci.trade_id = t.id
     where t.master_account_id = $1 and t.master_position_id is not null group by 1, 2`,
    [d.masterId],
  );
  const rowsFor = (position: string, actions: string[]) => {
    const slaves = new Set(
      covered.filter((c) => c.position === position && actions.includes(c.action)).flatMap((c) => c.slaves),
    );
    return d.slaves.filter((s) => !slaves.has(s.id)).map((s) => s.id);
  };
  const missing: string[] = [];
  const opened = new Set(deals.filter((x) => x.entry === 'in').map((x) => x.positionId));
  const closedAt = new Map<string, number>();
  const open = new Set((await d.positionsOf(d.masterSimId)).map((p) => p.id));
  for (const x of deals)
    if (x.entry === 'out' && !open.has(x.positionId)) closedAt.set(x.positionId, Date.parse(x.time));
  for (const id of opened)
    for (const s of rowsFor(id, ['open', 'order_filled'])) missing.push(`position ${id} open: no row for ${s}`);
  for (const id of closedAt.keys())
    for (const s of rowsFor(id, ['close', 'heal_close'])) missing.push(`position ${id} close: no row for ${s}`);

  const links = await probe.query<{ master: string; slave: string; position: string }>(
    `select master_position_id master, slave_account_id slave, slave_position_id position from position_links
     where master_account_id = $1 and kind = 'position'`,
    [d.masterId],
  );
  const slaveClosed = new Map<string, number>();
  for (const s of d.slaves)
    for (const x of await d.dealsOf(s.simId))
      if (x.entry === 'out') slaveClosed.set(`${s.id}/${x.positionId}`, Date.parse(x.time));
  const lags: number[] = [];
  const slow: Array<[number, string]> = [];
  const platformOf = new Map(d.slaves.map((s) => [s.id, s.platform]));
  for (const l of links) {
    const m = closedAt.get(l.master);
    const t = slaveClosed.get(`${l.slave}/${l.position}`);
    if (m !== undefined && t !== undefined && t >= m) {
      lags.push(t - m);
      if (t - m > 5000)
        slow.push([t - m, `${new Date(m).toISOString()} ${l.master} ${platformOf.get(l.slave)} +${t - m} ms`]);
    }
  }
  const skips = await probe.query<{ code: string; n: number }>(
    `select split_part(ci.skip_reason, ':', 1) code, count(*)::int n from copy_intents ci
     join trades t on t.id = ci.trade_id where t.master_account_id = $1 and ci.state = 'skipped' group by 1`,
    [d.masterId],
  );
  return {
    masterActionsWithoutRows: missing,
    slaveCloseLagMs: lags.sort((a, b) => a - b),
    slowCloses: slow.sort((a, b) => b[0] - a[0]).map(([, x]) => x),
    skipped: Object.fromEntries(skips.map((r) => [r.code, r.n])),
  };
}
