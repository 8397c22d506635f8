import { describe, expect, it } from 'vitest';
import { AppError } from '../../domain/errors.js';
import { MetaTraderAdapter } from './adapter.js';
import { MetaApiGateway } from './gateway.js';

/** A MetaApi client API that answers history-deals from a list, with offset/limit as documented. */
function fakeDealsApi(deals: (from: Date, to: Date) => unknown[]) {
  const calls: { from: string; to: string; offset: number; limit: number }[] = [];
  const fetchImpl: typeof fetch = async (input) => {
    const url = new URL(String(input));
    const m = /\/history-deals\/time\/([^/]+)\/([^/]+)$/.exec(url.pathname);
    if (!m) return new Response('{}', { status: 404 });
    const from = decodeURIComponent(m[1]!);
    const to = decodeURIComponent(m[2]!);
    const offset = Number(url.searchParams.get('offset'));
    const limit = Number(url.searchParams.get('limit'));
    calls.push({ from, to, offset, limit });
    const rows = deals(new Date(from), new Date(to)).slice(offset, offset + limit);
    return new Response(JSON.stringify(rows), { status: 200, headers: { 'content-type': 'application/json' } });
  };
  const gateway = new MetaApiGateway({
    clientUrl: 'http://metaapi.test',
    token: 't',
    accountId: 'acc',
    fetch: fetchImpl,
  });
  return { gateway, calls };
}

const deal = (i: number, extra: Record<string, unknown> = {}) => ({
  id: String(1000 + i),
  type: 'DEAL_TYPE_BUY',
  entryType: 'DEAL_ENTRY_IN',
  symbol: 'EURUSD',
  time: new Date(Date.UTC(2026, 0, 5, 10) + i * 1000).toISOString(),
  volume: 0.1,
  price: 1.08,
  profit: 0,
  positionId: String(1000 + i),
  orderId: String(1000 + i),
  ...extra,
});

describe('MetaApi history deals over REST', () => {
  it('pages with offset/limit 1000 until a short page', async () => {
    const all = Array.from({ length: 1003 }, (_, i) => deal(i));
    const { gateway, calls } = fakeDealsApi(() => all);
    const adapter = new MetaTraderAdapter({ gateway, platform: 'mt5' });
    const deals = await adapter.listDeals(new Date('2026-01-05T00:00:00Z'));
    expect(deals).toHaveLength(1003);
    expect(deals.at(-1)!.id).toBe('2002');
    expect(calls.map((c) => [c.offset, c.limit])).toEqual([
      [0, 1000],
      [1000, 1000],
    ]);
    expect(calls[0]!.from).toBe('2026-01-05T00:00:00.000Z');
  });

  it('fails rather than returning a history cut short when it does not fit the page budget', async () => {
    const all = Array.from({ length: 20 * 1000 + 1 }, (_, i) => deal(i));
    const { gateway, calls } = fakeDealsApi(() => all);
    await expect(gateway.historyDeals(new Date(0), new Date())).rejects.toBeInstanceOf(AppError);
    expect(calls).toHaveLength(20);
  });

  it('reads the lookback before the window only for a reversal, to split it by the volume held', async () => {
    const since = new Date('2026-01-05T00:00:00Z');
    const opening = deal(0, { id: '7', positionId: '50', time: '2026-01-04T10:00:00.000Z', volume: 0.3 });
    const reversal = deal(1, {
      id: '8',
      positionId: '50',
      type: 'DEAL_TYPE_SELL',
      entryType: 'DEAL_ENTRY_INOUT',
      volume: 0.5,
    });
    const book = [opening, reversal];
    const { gateway, calls } = fakeDealsApi((from, to) =>
      book.filter((d) => Date.parse(d.time) >= from.getTime() && Date.parse(d.time) < to.getTime()),
    );
    const adapter = new MetaTraderAdapter({
      gateway,
      platform: 'mt5',
      hedging: false,
      historyLookbackMs: 7 * 86_400_000,
    });
    const deals = await adapter.listDeals(since);
    expect(deals.map((d) => [d.id, d.entry, d.side, d.volume.toString()])).toEqual([
      ['8', 'out', 'sell', '0.3'],
      ['8:in', 'in', 'sell', '0.2'],
    ]);
    expect(calls.map((c) => [c.from, c.to === since.toISOString()])).toEqual([
      [since.toISOString(), false],
      ['2025-12-29T00:00:00.000Z', true],
    ]);
  });
});
