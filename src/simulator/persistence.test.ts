import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { dec } from '../domain/decimal.js';
import { SimBroker } from './broker.js';
import { SimPersistence } from './persistence.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ct-simpersist-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** What a process killed with -9 right now would find on its next start (no detach, no timers). */
function reopen(file: string): SimBroker {
  const snap = new SimPersistence(file).load();
  return new SimBroker(snap === undefined ? {} : { snapshot: snap });
}

function openBroker(
  file: string,
  opts: { compactBytes?: number; historyBound?: number } = {},
): { broker: SimBroker; p: SimPersistence } {
  const p = new SimPersistence(file, opts);
  const snap = p.load();
  const broker = new SimBroker(snap === undefined ? {} : { snapshot: snap });
  p.attach(broker);
  return { broker, p };
}

describe('SimPersistence: whatever the broker answered survives a kill', () => {
  it('creates its folder: on PostgreSQL the data dir may not exist yet (the embedded store is what made it)', () => {
    const file = join(dir, 'not-yet', 'simulator.json');
    const { broker } = openBroker(file);
    const acc = broker.createAccount({ balance: '1000' });
    expect(reopen(file).account(acc.id)).toBeTruthy();
  });

  it('has an account and a fill on disk as soon as the write returns', () => {
    const file = join(dir, 'simulator.json');
    const { broker } = openBroker(file);
    const acc = broker.createAccount({ balance: '1000' });
    const r = broker.placeOrder(acc.id, {
      symbol: 'EURUSD',
      side: 'buy',
      type: 'market',
      volume: dec('0.1'),
      tag: 't1',
    });
    const back = reopen(file);
    expect(back.account(acc.id)?.login).toBe(acc.login);
    expect(back.positions(acc.id).map((p) => p.id)).toEqual([r.position!.id]);
    expect(back.findByTag(acc.id, 't1').order?.id).toBe(r.order.id);
    expect(back.deals(acc.id)).toHaveLength(1);
  });

  it('keeps closes, close-by tags and balances, and never hands out an id twice after a restart', () => {
    const file = join(dir, 'simulator.json');
    const { broker } = openBroker(file);
    const acc = broker.createAccount({ balance: '1000', hedging: true });
    const a = broker.placeOrder(acc.id, {
      symbol: 'EURUSD',
      side: 'buy',
      type: 'market',
      volume: dec('0.2'),
      tag: 'open',
    });
    broker.placeOrder(acc.id, {
      symbol: 'EURUSD',
      side: 'sell',
      type: 'market',
      volume: dec('0.1'),
      tag: 'closeby',
      positionId: a.position!.id,
    });
    broker.placeOrder(acc.id, {
      symbol: 'EURUSD',
      side: 'buy',
      type: 'limit',
      price: dec('0.5'),
      volume: dec('0.1'),
      tag: 'pending',
    });
    const balance = broker.state(acc.id).balance;

    const back = reopen(file);
    expect(back.positions(acc.id)[0]!.volume.toString()).toBe('0.1');
    expect(back.findByTag(acc.id, 'closeby').order).toBeDefined();
    expect(back.orders(acc.id).map((o) => o.tag)).toEqual(['pending']);
    expect(back.state(acc.id).balance.toString()).toBe(balance.toString());
    const ids = new Set([...broker.orders(acc.id, { includeHistory: true }).map((o) => o.id), a.position!.id]);
    const next = back.placeOrder(acc.id, {
      symbol: 'EURUSD',
      side: 'buy',
      type: 'market',
      volume: dec('0.1'),
      tag: 'after',
    });
    expect(ids.has(next.order.id)).toBe(false);
    expect(back.createAccount({ balance: '1' }).id).not.toBe(acc.id);
  });

  it('a start on a folded journal opens it without rewriting the snapshot, and journals on from there', () => {
    const file = join(dir, 'simulator.json');
    const first = openBroker(file);
    const acc = first.broker.createAccount({ balance: '1000' });
    first.p.detach(first.broker);
    const snapshot = readFileSync(file, 'utf8');
    writeFileSync(file, snapshot.replace('{', '{ '));
    const { broker } = openBroker(file);
    // Not rewritten: the marker of the hand edit is still there.
    expect(readFileSync(file, 'utf8').startsWith('{ ')).toBe(true);
    broker.placeOrder(acc.id, { symbol: 'EURUSD', side: 'buy', type: 'market', volume: dec('0.1'), tag: 'after' });
    const back = reopen(file);
    expect(back.positions(acc.id).map((p) => p.tag)).toEqual(['after']);
  });

  it('keeps a bounded history when it folds the journal: the newest orders and deals, their tags still found', () => {
    const file = join(dir, 'simulator.json');
    const { broker, p } = openBroker(file, { compactBytes: 2000, historyBound: 5 });
    const acc = broker.createAccount({ balance: '100000' });
    for (let i = 0; i < 40; i++)
      broker.placeOrder(acc.id, { symbol: 'EURUSD', side: 'buy', type: 'market', volume: dec('0.01'), tag: `t${i}` });
    p.detach(broker);
    const back = reopen(file);
    const history = back.orders(acc.id, { includeHistory: true });
    expect(history.length).toBeLessThanOrEqual(5);
    expect(back.deals(acc.id).length).toBeLessThanOrEqual(5);
    expect(back.findByTag(acc.id, 't39').order?.tag).toBe('t39');
    expect(back.state(acc.id).balance.toString()).toBe(broker.state(acc.id).balance.toString());
  });

  it('folds the journal into the snapshot past its size limit and still loses nothing', () => {
    const file = join(dir, 'simulator.json');
    const { broker, p } = openBroker(file, { compactBytes: 2000 });
    const acc = broker.createAccount({ balance: '100000' });
    for (let i = 0; i < 30; i++)
      broker.placeOrder(acc.id, { symbol: 'EURUSD', side: 'buy', type: 'market', volume: dec('0.01'), tag: `t${i}` });
    expect(p.journalSize()).toBeLessThan(4000);
    const back = reopen(file);
    expect(back.positions(acc.id)).toHaveLength(30);
    expect(back.deals(acc.id)).toHaveLength(30);
  });

  it('ignores a torn last journal line (the write it belonged to never returned)', () => {
    const file = join(dir, 'simulator.json');
    const { broker, p } = openBroker(file);
    const acc = broker.createAccount({ balance: '1000' });
    broker.placeOrder(acc.id, { symbol: 'EURUSD', side: 'buy', type: 'market', volume: dec('0.1'), tag: 'kept' });
    appendFileSync(p.journalFile, '{"seq":99,"account":{"id"');
    expect(reopen(file).positions(acc.id)).toHaveLength(1);
  });

  it('refuses a journal corrupt before its end instead of starting from half the state', () => {
    const file = join(dir, 'simulator.json');
    const { broker, p } = openBroker(file);
    broker.createAccount({ balance: '1000' });
    appendFileSync(p.journalFile, 'garbage\n{"also":"later"}\n');
    expect(() => new SimPersistence(file).load()).toThrow(/corrupt at line/);
  });
});
