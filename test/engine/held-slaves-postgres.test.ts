import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dec } from '../../src/domain/decimal.js';
import { initialHealth } from '../../src/domain/account.js';
import { withDefaults } from '../../src/domain/copy-rule.js';
import { SimBroker } from '../../src/simulator/broker.js';
import { Store } from '../../src/store/store.js';
import { requirePostgres, tempDatabase } from '../helpers/postgres.js';
import { seedGroup, startEngine, type EngineHarness, type SeededGroup } from './copy-harness.js';

const pgAvailable = await requirePostgres();

/**
 * Issue 12: on PostgreSQL a watcher's copy plans on its group's Slaves as a read confirmed them recently, without
 * reading them again, and its record goes in only while no write but a health round's touched them. Another
 * process (a second Store on the same database) changes the group between the Master's fills.
 */
describe.runIf(pgAvailable)("a watcher's copy on the group as held (PostgreSQL)", () => {
  let broker: SimBroker;
  let h: EngineHarness;
  let other: Store;
  let g: SeededGroup;
  let drop: () => Promise<void> = async () => undefined;
  const seen: string[] = [];
  /** The group read's statement (its digests); the record's guard names the version table but hashes nothing. */
  const groupReads = () => seen.filter((q) => /hashtextextended/.test(q)).length;
  const records = () => seen.filter((q) => /insert into trades/i.test(q));

  beforeAll(async () => {
    const db = await tempDatabase();
    drop = db.drop;
    broker = new SimBroker({ seed: 7 });
    broker.setPrice('EURUSD', '1.10000');
    // Long enough that no read falls due between two fills of a test on a slow machine.
    h = await startEngine({
      broker,
      databaseUrl: db.url,
      onStatement: (q) => seen.push(q),
      heldSlavesMaxAgeMs: 600_000,
    });
    other = await Store.open({ dataDir: ':unused:', databaseUrl: db.url, migrate: false });
    g = await seedGroup(h.store, broker, { slaves: [{ rule: {} }, { rule: {} }] });
    await h.start();
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    await other?.close();
    await drop();
  });

  /** A Master market buy of 0.1 lots; the statements sent until every outcome is written. */
  async function fill(): Promise<void> {
    seen.length = 0;
    broker.placeOrder(g.masterSim, { symbol: 'EURUSD', side: 'buy', type: 'market', volume: dec('0.1'), tag: '' });
    await h.idle();
  }
  const volumes = (i: number) => broker.positions(g.slaves[i]!.sim).map((p) => p.volume.toString());

  it('reads the group once, then copies on it as held; a health round elsewhere does not make it read', async () => {
    await fill();
    expect(groupReads()).toBe(1);
    await fill();
    expect(groupReads()).toBe(0);
    expect(records()).toHaveLength(1);
    expect(records()[0]).toMatch(/group_slaves_version/);
    // A health round of another process moves the group's `version`, not its `settled`: still held.
    await other.accounts.applyHealth(
      g.slaves.map((s) => ({
        id: s.account.id,
        health: { ...initialHealth(), checkedAt: new Date().toISOString() },
        funds: { balance: dec('10000'), equity: dec('9990') },
      })),
    );
    await fill();
    expect(groupReads()).toBe(0);
    expect(volumes(0)).toEqual(['0.1', '0.1', '0.1']);
    expect(volumes(1)).toEqual(['0.1', '0.1', '0.1']);
  }, 60_000);

  it('a rule another process changed since the read: nothing recorded on the held group, read again, copied by the new rule', async () => {
    const before = (await h.store.trades.listTrades(g.userId, { limit: 100 })).length;
    await other.accounts.setRule(
      g.slaves[1]!.account.id,
      withDefaults({ sizing: { mode: 'multiplier', multiplier: '3' } }),
    );
    await fill();
    // The guarded record, refused; the read; the record of the new plan.
    expect(records()).toHaveLength(2);
    expect(groupReads()).toBe(1);
    expect(volumes(0).at(-1)).toBe('0.1');
    expect(volumes(1).at(-1)).toBe('0.3');
    // One trade for the one fill, and each Slave has one intent in it.
    const trades = await h.store.trades.listTrades(g.userId, { limit: 100 });
    expect(trades.length).toBe(before + 1);
    const intents = await h.store.trades.intentsOfTrade(trades[0]!.id);
    expect(intents.map((i) => i.slaveAccountId).sort()).toEqual(g.slaves.map((s) => s.account.id).sort());
    // Held again: the next fill reads nothing.
    await fill();
    expect(groupReads()).toBe(0);
    expect(volumes(1).at(-1)).toBe('0.3');
  }, 60_000);

  it('a Slave paused by another process is not copied to by the next fill', async () => {
    const n = volumes(0).length;
    await other.accounts.setStatus(g.slaves[0]!.account.id, 'paused', 'by user');
    await fill();
    expect(groupReads()).toBe(1);
    expect(volumes(0)).toHaveLength(n);
    expect(volumes(1)).toHaveLength(n + 1);
  }, 60_000);

  it('a plan with nothing to send (its events in the record, one transaction) is guarded too', async () => {
    const n = [volumes(0).length, volumes(1).length];
    await other.accounts.setStatus(g.slaves[1]!.account.id, 'paused', 'by user');
    await fill();
    expect(groupReads()).toBe(1);
    // Held: both paused, nothing to send, the record's transaction checks the group first.
    await fill();
    expect(groupReads()).toBe(0);
    expect(seen.some((q) => /^select coalesce\(\(select "settled"/.test(q))).toBe(true);
    await other.accounts.setStatus(g.slaves[1]!.account.id, 'connected', null);
    await fill();
    expect(groupReads()).toBe(1);
    expect([volumes(0).length, volumes(1).length]).toEqual([n[0], n[1]! + 1]);
  }, 60_000);
});
