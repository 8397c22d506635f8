import type { Account } from '../domain/account.js';
import { notFound } from '../domain/errors.js';
import type { Store } from '../store/store.js';
import type { AdapterRegistry } from './adapter-registry.js';
import type { Dispatcher } from './dispatcher.js';

export interface ClosedPosition {
  positionId: string;
  symbol: string;
  side: string;
  volume: string;
  outcome: 'closed' | 'failed' | 'unresolved';
  closePrice: string | null;
  error: string | null;
}

export interface AccountPanicReport {
  accountId: string;
  closed: number;
  failed: number;
  positions: ClosedPosition[];
  /** Open positions left after the attempts (0 = flat). */
  remaining: number;
  error: string | null;
}

const ATTEMPTS = 3;

/**
 * Emergency close of every open position of an account, or of every account in a group (all accounts in
 * parallel). Retries what failed, re-reading the broker each round, until flat or out of attempts; the report
 * says exactly what was closed and what is left.
 */
export class PanicCloseService {
  constructor(private readonly store: Store, private readonly adapters: AdapterRegistry, private readonly dispatcher: Dispatcher) {}

  async closeAccount(userId: string, accountId: string): Promise<AccountPanicReport> {
    const account = await this.store.accounts.owned(userId, accountId);
    if (!account) throw notFound('account');
    await this.store.events.emit([{ userId, accountId, type: 'panic_close.started', payload: { scope: 'account', targetId: accountId } }]);
    const report = await this.flatten(account);
    await this.store.events.emit([{ userId, accountId, type: 'panic_close.finished', payload: { scope: 'account', targetId: accountId, closed: report.closed, failed: report.failed, remaining: report.remaining } }]);
    return report;
  }

  async closeGroup(userId: string, groupId: string): Promise<{ groupId: string; accounts: AccountPanicReport[] }> {
    const group = await this.store.accounts.ownedGroup(userId, groupId);
    if (!group) throw notFound('copier group');
    const members = await this.store.accounts.list(userId, { groupId });
    await this.store.events.emit(members.map((m) => ({ userId, accountId: m.id, type: 'panic_close.started', payload: { scope: 'group', targetId: groupId } })));
    // Master first would let its closes race the copies; closing all at once is what "emergency" means.
    const accounts = await Promise.all(members.map((m) => this.flatten(m)));
    await this.store.events.emit(accounts.map((r) => ({ userId, accountId: r.accountId, type: 'panic_close.finished', payload: { scope: 'group', targetId: groupId, closed: r.closed, failed: r.failed, remaining: r.remaining } })));
    return { groupId, accounts };
  }

  private async flatten(account: Account): Promise<AccountPanicReport> {
    const report: AccountPanicReport = { accountId: account.id, closed: 0, failed: 0, positions: [], remaining: 0, error: null };
    let adapter;
    try {
      adapter = await this.adapters.forAccount(account);
    } catch (err) {
      report.error = err instanceof Error ? err.message : String(err);
      return report;
    }
    const results = new Map<string, ClosedPosition>();
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      let open;
      try {
        open = await adapter.listPositions();
      } catch (err) {
        report.error = err instanceof Error ? err.message : String(err);
        break;
      }
      if (open.length === 0) break;
      await Promise.all(open.map(async (pos) => {
        const o = await this.dispatcher.close(account.id, adapter, pos.id).catch((err: unknown) => ({ kind: 'unresolved' as const, code: 'adapter_error', message: String(err) }));
        results.set(pos.id, {
          positionId: pos.id, symbol: pos.symbol, side: pos.side, volume: pos.volume.toString(),
          outcome: o.kind === 'confirmed' ? 'closed' : o.kind === 'unresolved' ? 'unresolved' : 'failed',
          closePrice: o.kind === 'confirmed' ? o.fillPrice?.toString() ?? null : null,
          error: o.kind === 'confirmed' ? null : `${o.code}: ${o.message}`,
        });
        if (o.kind === 'confirmed') {
          await this.store.events.emit([{ userId: account.userId, accountId: account.id, type: 'position.closed', payload: { role: account.role, positionId: pos.id, symbol: pos.symbol, side: pos.side, volume: pos.volume.toString(), price: o.fillPrice?.toString() ?? null, reason: 'panic_close' } }]);
          for (const link of await this.store.trades.openLinksOfSlave(account.id)) if (link.slavePositionId === pos.id) await this.store.trades.closeLink(link.id, 'panic_close');
        }
      }));
    }
    const left = await adapter.listPositions().catch(() => null);
    report.positions = [...results.values()];
    // A position that failed once but is gone now was closed by a later round (or settled the unknown).
    const stillOpen = new Set((left ?? []).map((p) => p.id));
    for (const r of report.positions) if (r.outcome !== 'closed' && !stillOpen.has(r.positionId) && left) { r.outcome = 'closed'; r.error = null; }
    report.closed = report.positions.filter((p) => p.outcome === 'closed').length;
    report.failed = report.positions.length - report.closed;
    report.remaining = left ? left.length : report.positions.length - report.closed;
    return report;
  }
}
