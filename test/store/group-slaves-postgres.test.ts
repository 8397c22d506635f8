import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { dec } from '../../src/domain/decimal.js';
import { withDefaults } from '../../src/domain/copy-rule.js';
import { initialHealth } from '../../src/domain/account.js';
import { seedAccounts } from '../helpers/store-seed.js';
import { requirePostgres, tempDatabase } from '../helpers/postgres.js';

const pgAvailable = await requirePostgres();

/**
 * The PostgreSQL store holds each group's Slaves between copies (issue 12) while other processes write them: every
 * answer of one Store must follow every kind of change another Store (another process) commits.
 */
describe.runIf(pgAvailable)("a group's Slaves on PostgreSQL, written by another process", () => {
  let reader: Store;
  let writer: Store;
  let drop: () => Promise<void>;
  const seen: string[] = [];
  beforeAll(async () => {
    const db = await tempDatabase();
    drop = db.drop;
    reader = await Store.open({ dataDir: ':unused:', databaseUrl: db.url, onStatement: (q) => seen.push(q) });
    writer = await Store.open({ dataDir: ':unused:', databaseUrl: db.url, migrate: false });
  }, 120_000);
  afterAll(async () => {
    await reader?.close();
    await writer?.close();
    await drop?.();
  });

  it('answers from the rows it holds until a change commits, then with the change', async () => {
    const { userId, master, slaves } = await seedAccounts(writer, 'gs', 4);
    const w = writer.accounts;
    const g = await w.createGroup(userId, 'g');
    await w.setRoleAndGroup(master.id, 'master', g.id);
    for (const s of slaves) await w.setRoleAndGroup(s.id, 'slave', g.id);
    const [s1, s2, s3, s4] = slaves.map((s) => s.id) as [string, string, string, string];

    /** What a read that holds nothing returns: the group's live Slaves from the writer's store, with their rules. */
    const current = async () => {
      const list = (await w.list(userId, { groupId: g.id })).filter((a) => a.role === 'slave');
      const rules = await w.rulesFor(list.map((a) => a.id));
      return list.map((account) => ({ account, rule: rules.get(account.id) ?? withDefaults(undefined) }));
    };
    const read = async () => {
      seen.length = 0;
      const got = await reader.accounts.slavesOfGroup(userId, g.id);
      expect(seen).toHaveLength(1);
      return got;
    };

    const first = await read();
    expect(first).toEqual(await current());
    expect(first.map((s) => s.account.id)).toEqual([s1, s2, s3, s4]);
    // Nothing changed: the same objects, not rows read and mapped again.
    const again = await read();
    expect(again).toEqual(first);
    for (const [i, s] of again.entries()) expect(s.account).toBe(first[i]!.account);

    const changes: Array<[string, () => Promise<unknown>]> = [
      ['balance and equity', () => w.setFunds(s1, dec('1234.5'), dec('1200'))],
      ['a health round', () => w.applyHealth([{ id: s2, health: { ...initialHealth(), inSync: false }, funds: null }])],
      ['a rule stored', () => w.setRule(s2, withDefaults({ reverse: true }))],
      ['a rule changed', () => w.setRule(s2, withDefaults({ reverse: false, copyStopLoss: false }))],
      ['a pause', () => w.setStatus(s3, 'paused', 'by user')],
      ['a Slave made Master', () => w.setRoleAndGroup(s4, 'master', g.id)],
      ['a Slave back', () => w.setRoleAndGroup(s4, 'slave', g.id)],
      ['a Slave leaving the group', () => w.setRoleAndGroup(s3, 'slave', null)],
      ['a Slave removed', () => w.remove(s2)],
      [
        'a Slave added',
        () =>
          w.create({
            userId,
            platform: 'sim',
            role: 'slave',
            name: 'new',
            groupId: g.id,
            brokerAccountId: 'gs-new',
            brokerAccountNumber: '99',
          }),
      ],
      ['the group deleted', () => w.deleteGroup(userId, g.id)],
    ];
    let before = again;
    for (const [what, change] of changes) {
      await change();
      const expected = await current();
      const got = await read();
      expect(got, what).toEqual(expected);
      expect(got, what).not.toEqual(before);
      before = got;
    }
    expect(before).toEqual([]);
  }, 60_000);
});
