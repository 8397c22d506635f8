import { isStoppedByChoice } from '../domain/account.js';
import type { Account } from '../domain/account.js';
import { correlationTag } from '../domain/correlation.js';
import { type CopyRule, withDefaults } from '../domain/copy-rule.js';
import { goesStale, intentAction } from '../domain/intent-action.js';
import type { CopyIntent, Trade } from '../domain/ledger-types.js';
import type { BrokerAdapter } from '../platforms/adapter.js';
import type { Store } from '../store/store.js';
import type { AdapterRegistry } from './adapter-registry.js';
import type { CopyEngine } from './copy-engine.js';
import { opOf, verifyOp, type IntentOp } from './intent-ops.js';
import type { TradeLike } from './ledger.js';
import { outcomeWrite } from './outcome-ledger.js';
import type { TagSnapshot } from './tag-snapshot.js';

export type SettleResult = { result: 'confirmed' | 'resent' | 'rejected' | 'unknown'; resend?: Promise<unknown> };

export interface SettleDeps {
  store: Store;
  adapters: AdapterRegistry;
  engine: CopyEngine;
}

/** Everything one unsettled row is judged with, read as the row's own dispatch read it. */
interface Judged {
  master: Account;
  slave: { account: Account; rule: CopyRule; adapter: BrokerAdapter };
  actionAt: Date;
  fresh: boolean;
  extra: { origTag: string | null; fresh: boolean; linkVolume: CopyIntent['plannedVolume'] };
  op: IntentOp;
  prevTags: string[];
  t: TradeLike;
}

/**
 * One unsettled row: looked up at the broker first, always. Found: its outcome written. Proven absent: resent
 * under a new tag while the action is fresh and the Slave still takes copies, else rejected with why. The broker
 * could not be asked: left for the next pass.
 */
export async function settleOne(
  deps: SettleDeps,
  intent: CopyIntent,
  trade: Trade,
  lookups: (adapter: BrokerAdapter) => TagSnapshot,
): Promise<SettleResult> {
  const j = await judge(deps, intent, trade);
  if (!j) return { result: 'unknown' };
  const snapshot = lookups(j.slave.adapter);
  const v = await verifyOp(j.slave.adapter, j.op, [intent.tag, ...j.prevTags], (tag) => snapshot.find(tag));
  if (v.state === 'unknown') return { result: 'unknown' };
  if (v.state === 'applied') {
    await deps.store.trades.applyOutcomes([
      outcomeWrite(j.master, trade.id, j.t, intent, j.slave.account.id, j.op, v.outcome, { prevTags: j.prevTags }),
    ]);
    return { result: v.outcome.kind === 'confirmed' ? 'confirmed' : 'rejected' };
  }
  const why = notResentWhy(deps.engine.clock(), intent, j);
  if (why) {
    const outcome = {
      kind: 'rejected' as const,
      code: why.code,
      message: `not at the broker, and ${why.why}: not resent`,
    };
    await deps.store.trades.applyOutcomes([
      outcomeWrite(j.master, trade.id, j.t, intent, j.slave.account.id, j.op, outcome, { prevTags: j.prevTags }),
    ]);
    return { result: 'rejected' };
  }
  return resend(deps, intent, trade, j);
}

/** The row's accounts, rule, adapter and op, as at its dispatch; null when any of them cannot be had now. */
async function judge(deps: SettleDeps, intent: CopyIntent, trade: Trade): Promise<Judged | null> {
  const { store } = deps;
  const [slaveAcc, master] = await Promise.all([
    store.accounts.byId(intent.slaveAccountId),
    store.accounts.byId(trade.masterAccountId),
  ]);
  if (!slaveAcc || !master) return null;
  const rule = (await store.accounts.rulesFor([slaveAcc.id])).get(slaveAcc.id) ?? withDefaults(undefined);
  const adapter = await deps.adapters.forAccount(slaveAcc).catch(() => null);
  if (!adapter) return null;
  const actionAt = trade.actionAt ?? trade.createdAt;
  const fresh = deps.engine.clock() - actionAt.getTime() <= rule.maxDelayMs;
  const link = intent.targetId
    ? ((await store.trades.openLinksOfSlave(slaveAcc.id)).find((l) => l.slavePositionId === intent.targetId) ?? null)
    : null;
  const origTag =
    intent.action === 'order_filled' && link?.intentId
      ? ((await store.trades.intentById(link.intentId))?.tag ?? null)
      : null;
  const extra = { origTag, fresh, linkVolume: link?.volume ?? null };
  const t: TradeLike = {
    orderType: trade.orderType,
    masterPositionId: trade.masterPositionId,
    masterOrderId: trade.masterOrderId,
    fillPrice: trade.fillPrice,
    side: trade.side,
    actionAt,
  };
  return {
    master,
    slave: { account: slaveAcc, rule, adapter },
    actionAt,
    fresh,
    extra,
    op: opOf(intent, trade, rule, extra),
    prevTags: Array.isArray(intent.prevTags) ? (intent.prevTags as string[]) : [],
    t,
  };
}

/**
 * Proven absent: no new exposure when the action is too old, or when the Slave was stopped since (paused, or
 * locked by a panic-close that is closing everything): the planner would not plan it now. A close or a modify is
 * always sent again.
 */
function notResentWhy(now: number, intent: CopyIntent, j: Judged): { code: string; why: string } | null {
  if (!goesStale(intentAction(intent.action))) return null;
  if (!j.fresh)
    return {
      code: 'stale_unresolved',
      why: `the action is ${now - j.actionAt.getTime()} ms old (rule allows ${j.slave.rule.maxDelayMs} ms)`,
    };
  if (isStoppedByChoice(j.slave.account.status))
    return { code: 'slave_not_eligible', why: `the account is ${j.slave.account.status} now` };
  return null;
}

/** Proven absent and still fresh: a new attempt under a new tag, so a late arrival of the old one is told apart. */
async function resend(deps: SettleDeps, intent: CopyIntent, trade: Trade, j: Judged): Promise<SettleResult> {
  const attempt = intent.attempts + 1;
  const tag = correlationTag({
    tradeId: trade.id,
    accountId: j.slave.account.id,
    action: `${intent.action}:${intent.targetId ?? ''}`,
    attempt,
  });
  const row: CopyIntent = { ...intent, tag };
  const resendOp = opOf(row, trade, j.slave.rule, j.extra);
  const prevTags = [...j.prevTags, intent.tag];
  await deps.store.trades.updateIntent(intent.id, { state: 'sent', attempts: attempt, tag, prevTags });
  // Handed back unawaited: the pass decides whether to wait for it (see Settler.pass).
  const sent = deps.engine.sendOp({
    master: j.master,
    tradeId: trade.id,
    trade: j.t,
    row,
    slave: j.slave,
    op: resendOp,
    attempt,
    latency: { ...((intent.latency as Record<string, number>) ?? {}) },
    queuedAt: performance.now(),
    prevTags,
  });
  return { result: 'resent', resend: sent };
}
