import { describe, expect, it } from 'vitest';
import { dec } from '../domain/decimal.js';
import type { Account } from '../domain/account.js';
import { testAccount } from '../../test/helpers/account.js';
import { withDefaults, type CopyRule } from '../domain/copy-rule.js';
import type { InstrumentSpec } from '../domain/types.js';
import type { PositionLink } from '../domain/ledger-types.js';
import type { MasterAction } from './actions.js';
import { planMasterRefusal, type ActionPlanInput, type PlanSlave } from './action-planner.js';
import { planFollowRows } from './follow-planner.js';

const acct = testAccount;
const spec: InstrumentSpec = {
  symbol: 'EURUSD.x',
  volumeStep: dec('0.01'),
  minVolume: dec('0.01'),
  maxVolume: dec('100'),
  contractSize: dec(100_000),
  tickSize: dec('0.0001'),
};
const action = (o: Partial<MasterAction>): MasterAction => ({
  id: 'a1',
  kind: 'modify',
  masterAccountId: 'm',
  positionId: 'mp1',
  orderId: null,
  symbol: 'EURUSD',
  side: 'buy',
  type: 'market',
  volume: dec('1'),
  prevVolume: null,
  price: null,
  stopLoss: dec('1.09512'),
  takeProfit: dec('1.11049'),
  at: 0,
  item: {
    accountId: 'm',
    kind: 'position',
    itemId: 'mp1',
    symbol: 'EURUSD',
    side: 'buy',
    orderType: 'market',
    volume: dec('1'),
  },
  ...o,
});
const link = (o: Partial<PositionLink> = {}): PositionLink => ({
  id: 'l1',
  kind: 'position',
  masterAccountId: 'm',
  masterPositionId: 'mp1',
  slaveAccountId: 's',
  slavePositionId: 'sp1',
  intentId: 'i0',
  volume: dec('0.5'),
  open: true,
  closedReason: null,
  createdAt: new Date(0),
  closedAt: null,
  ...o,
});
let n = 0;
const input = (a: MasterAction, o: Partial<ActionPlanInput> = {}): ActionPlanInput => ({
  master: acct('m', { role: 'master' }),
  action: a,
  tradeId: 'trd_1',
  rowAction: a.kind,
  newIntentId: () => `int_${++n}`,
  ...o,
});
const slave = (rule: Partial<CopyRule> = {}, o: Partial<Account> = {}): PlanSlave => ({
  account: acct('s', o),
  rule: withDefaults({ symbolMap: { EURUSD: 'EURUSD.x' }, ...rule }),
  adapter: {},
});

describe('planFollowRows: follow-ups by the same mapping as opens', () => {
  it('a reversed copy of an SL/TP change carries the swapped levels on the Slave tick grid, under the mapped symbol and side', () => {
    const [p] = planFollowRows(input(action({})), [{ slave: slave({ reverse: true }), links: [link()], spec }]);
    expect(p).toMatchObject({
      send: true,
      row: {
        action: 'modify',
        symbol: 'EURUSD.x',
        side: 'sell',
        targetId: 'sp1',
        stopLoss: dec('1.1105'),
        takeProfit: dec('1.0951'),
        plannedVolume: dec('0.5'),
        state: 'planned',
      },
    });
  });

  it('a reduce whose rest would fall below the minimum becomes the full close (a heal stays a heal), and says so', () => {
    const reduce = action({ kind: 'reduce', volume: dec('0.99'), prevVolume: dec('1') });
    const [p] = planFollowRows(input(reduce), [{ slave: slave(), links: [link({ volume: dec('0.5') })], spec }]);
    expect(p).toMatchObject({
      send: true,
      row: {
        action: 'close',
        plannedVolume: dec('0.5'),
        skipReason: expect.stringMatching(/^rounded_to_full_close: /),
      },
    });
    const [h] = planFollowRows(input(reduce, { rowAction: 'heal_reduce' }), [
      { slave: slave(), links: [link({ volume: dec('0.5') })], spec },
    ]);
    expect(h?.row.action).toBe('heal_close');
  });

  it('no open copy: one skipped row saying why (closed by hand is never copied again)', () => {
    const [p] = planFollowRows(input(action({ kind: 'close' })), [
      { slave: slave(), links: [link({ open: false, closedReason: 'user_closed' })], spec: null },
    ]);
    expect(p).toMatchObject({
      send: false,
      link: null,
      row: { state: 'skipped', skipReason: expect.stringMatching(/^user_closed: /) },
    });
  });

  it("a fill to a Slave that may not add exposure cancels its pending copy; the risk guard's refusal does the same", () => {
    const fill = action({ kind: 'order_filled', orderId: 'mo1', positionId: 'mp9' });
    const links = [link({ kind: 'order', slavePositionId: 'so1' })];
    const [paused] = planFollowRows(input(fill), [{ slave: slave({}, { status: 'paused' }), links, spec }]);
    expect(paused).toMatchObject({
      send: true,
      row: {
        action: 'order_cancelled',
        skipReason: expect.stringMatching(/^slave_not_eligible: .*cancelled instead of filled$/),
      },
    });
    const [p] = planFollowRows(input(fill), [{ slave: slave(), links, spec }]);
    expect(p?.check?.ctx).toMatchObject({ action: 'order_filled', symbol: 'EURUSD.x', type: 'market' });
    expect(p!.check!.decide({ ok: false, code: 'risk_max_open_volume', message: 'too much' }).row).toMatchObject({
      action: 'order_cancelled',
      skipReason: 'risk_max_open_volume: too much; the pending copy is cancelled instead of filled',
    });
    expect(p!.check!.decide({ ok: true, volume: dec('0.2') }).row).toMatchObject({
      action: 'order_filled',
      plannedVolume: dec('0.2'),
    });
  });
});

describe('planMasterRefusal', () => {
  it('a paused Master: every Slave gets a skipped row with the reason; a connected one is planned as usual', () => {
    const open = action({ kind: 'open' });
    const rows = planMasterRefusal(
      input(open, { master: acct('m', { role: 'master', status: 'paused', statusReason: 'by user' }) }),
      [slave({ reverse: true })],
    );
    expect(rows?.[0]).toMatchObject({
      send: false,
      row: {
        symbol: 'EURUSD.x',
        side: 'sell',
        state: 'skipped',
        skipReason: 'master_not_eligible: the Master is paused (by user)',
      },
    });
    expect(planMasterRefusal(input(open), [slave()])).toBeNull();
  });
});
