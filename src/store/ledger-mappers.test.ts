import { describe, expect, it } from 'vitest';
import { dec } from '../domain/decimal.js';
import {
  intentFromRow,
  intentSetToRow,
  intentToRow,
  linkFromRow,
  linkToRow,
  masterItemFromRow,
  masterItemToRow,
  tradeFromRow,
  tradeSetToRow,
  tradeToRow,
  type IntentRow,
  type LinkRow,
  type MasterItemRow,
  type TradeRow,
} from './ledger-mappers.js';

const at = new Date('2026-01-02T03:04:05Z');

const tradeRow: TradeRow = {
  id: 'trd_1',
  userId: 'usr_1',
  masterAccountId: 'acc_m',
  groupId: null,
  source: 'watcher',
  action: 'open',
  symbol: 'EURUSD',
  side: 'buy',
  orderType: 'market',
  volume: '0.1',
  price: null,
  stopLoss: '1.07',
  takeProfit: null,
  tag: 'ctabc',
  status: 'accepted',
  masterOutcome: { kind: 'observed', volumeAfter: '0.1' },
  masterPositionId: 'p1',
  masterOrderId: null,
  fillPrice: '1.08512',
  requestId: null,
  copiedTo: 2,
  actionId: 'acc_m:p1:open:1',
  actionAt: at,
  masterMagic: null,
  masterComment: null,
  createdAt: at,
  updatedAt: at,
};

const intentRow: IntentRow = {
  id: 'int_1',
  tradeId: 'trd_1',
  slaveAccountId: 'acc_s',
  tag: 'ctdef',
  action: 'open',
  symbol: 'EURUSD',
  side: 'buy',
  plannedVolume: '0.05',
  plannedPrice: null,
  stopLoss: null,
  takeProfit: '1.1',
  state: 'confirmed',
  skipReason: null,
  outcome: { kind: 'confirmed' },
  brokerOrderId: 'o1',
  brokerPositionId: 'p9',
  filledVolume: '0.05',
  fillPrice: '1.08515',
  slippage: '-0.00003',
  latency: { plan: 1 },
  attempts: 1,
  targetId: null,
  prevTags: null,
  sizingInputs: null,
  ruleRevision: null,
  createdAt: at,
  updatedAt: at,
};

const linkRow: LinkRow = {
  id: 'lnk_1',
  kind: 'position',
  masterAccountId: 'acc_m',
  masterPositionId: 'p1',
  slaveAccountId: 'acc_s',
  slavePositionId: 'p9',
  intentId: 'int_1',
  volume: '0.20',
  open: true,
  closedReason: null,
  createdAt: at,
  closedAt: null,
};

const itemRow: MasterItemRow = {
  accountId: 'acc_m',
  kind: 'order',
  itemId: 'o7',
  symbol: 'EURUSD',
  side: 'sell',
  orderType: 'limit',
  volume: '1',
  price: '1.09',
  stopLoss: null,
  takeProfit: null,
  tag: null,
  open: true,
  seq: 3,
  originTradeId: null,
  openedAt: null,
  updatedAt: at,
};

describe('ledger mappers', () => {
  it('reads numeric columns as Decimals and keeps nulls null', () => {
    const t = tradeFromRow(tradeRow);
    expect(t.volume.eq('0.1')).toBe(true);
    expect(t.stopLoss?.toString()).toBe('1.07');
    expect(t.price).toBeNull();
    expect(t.takeProfit).toBeNull();
    const i = intentFromRow(intentRow);
    expect(i.slippage?.toString()).toBe('-0.00003');
    expect(i.plannedPrice).toBeNull();
    const it = masterItemFromRow(itemRow);
    expect(it.price?.eq('1.09')).toBe(true);
    expect(it.stopLoss).toBeNull();
  });

  it('round-trips every row unchanged when its text is already normal', () => {
    expect(tradeToRow(tradeFromRow(tradeRow))).toEqual(tradeRow);
    expect(intentToRow(intentFromRow(intentRow))).toEqual(intentRow);
    expect(masterItemToRow(masterItemFromRow(itemRow))).toEqual(itemRow);
    const closed = { ...linkRow, volume: null, open: false, closedReason: 'user_closed', closedAt: at };
    expect(linkToRow(linkFromRow(closed))).toEqual(closed);
  });

  it('reads a volume PostgreSQL computed as "0.20" as 0.2, and writes it back as "0.2"', () => {
    const l = linkFromRow(linkRow);
    expect(l.volume?.eq(dec('0.2'))).toBe(true);
    expect(linkToRow(l).volume).toBe('0.2');
  });

  it('writes a partial update with only the keys it was given (null stays null, absent stays absent)', () => {
    const set = tradeSetToRow({ status: 'accepted', fillPrice: null });
    expect(set).toEqual({ status: 'accepted', fillPrice: null });
    expect('volume' in set).toBe(false);
    const upd = intentSetToRow({ state: 'confirmed', filledVolume: dec('0.30'), slippage: undefined });
    expect(upd).toEqual({ state: 'confirmed', filledVolume: '0.3', slippage: undefined });
  });
});
