import type { IntentState } from '../../src/domain/intent.js';
import { intentRow, seedAccounts, tradeRow } from '../helpers/store-seed.js';
import { beforeAll, afterAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/store.js';
import type { Account } from '../../src/domain/account.js';
import { newId } from '../../src/domain/ids.js';
import { IntentTransitionError } from '../../src/domain/intent.js';
import { Decimal, dec } from '../../src/domain/decimal.js';
import { withDefaults } from '../../src/domain/copy-rule.js';
import { sql } from 'drizzle-orm';

/** The store contract: every store implementation (PGlite, PostgreSQL) must pass exactly these tests. */
export function storeContract(name: string, open: () => Promise<{ store: Store; cleanup(): Promise<void> }>): void {
  describe(`store contract: ${name}`, () => {
    let store: Store;
    let cleanup: () => Promise<void>;

    beforeAll(async () => {
      ({ store, cleanup } = await open());
    }, 60_000);
    afterAll(async () => {
      await store?.close();
      await cleanup?.();
    });

    const user = async (email = `${newId('usr')}@example.test`) => store.users.create(email, 'scrypt$hash');
    /** A new user's sim Master and Slave; `key` keeps their broker ids apart from other cases' (connected once). */
    const masterAndSlave = async (key: string) => {
      const { userId, master, slaves } = await seedAccounts(store, key, 1);
      return { u: { id: userId }, m: master, s: slaves[0]! };
    };

    it('creates users with case-insensitively unique emails', async () => {
      const u = await user('Alice@Example.test');
      expect((await store.users.byEmail('alice@example.TEST'))?.id).toBe(u.id);
      await expect(store.users.create('ALICE@example.test', 'x')).rejects.toMatchObject({ code: 'conflict' });
    });

    it('finds live access tokens only: not expired, not revoked', async () => {
      const u = await user();
      const live = await store.credentials.insertAccessToken(u.id, 'h-live', new Date(Date.now() + 60_000));
      await store.credentials.insertAccessToken(u.id, 'h-old', new Date(Date.now() - 1));
      expect((await store.credentials.liveAccessToken('h-live'))?.userId).toBe(u.id);
      expect(await store.credentials.liveAccessToken('h-old')).toBeNull();
      expect(await store.credentials.revokeAccessToken(live.id, 'usr_someone_else')).toBe(false);
      expect(await store.credentials.revokeAccessToken(live.id, u.id)).toBe(true);
      expect(await store.credentials.liveAccessToken('h-live')).toBeNull();
    });

    it('rotates an API key with an overlap window, and revokes', async () => {
      const u = await user();
      const k1 = await store.credentials.insertApiKey(u.id, 'ci', 'ctk_abc', 'k1');
      const until = new Date(Date.now() + 1000);
      const k2 = await store.credentials.rotateApiKey(u.id, k1.id, until, 'ctk_def', 'k2');
      expect(k2?.name).toBe('ci');
      expect((await store.credentials.liveApiKey('k1'))?.id).toBe(k1.id);
      expect(await store.credentials.liveApiKey('k1', new Date(until.getTime() + 1))).toBeNull();
      expect((await store.credentials.liveApiKey('k2'))?.id).toBe(k2!.id);
      expect(await store.credentials.rotateApiKey('usr_other', k2!.id, until, 'x', 'k3')).toBeNull();
      expect(await store.credentials.revokeApiKey(u.id, k2!.id)).toBe(true);
      expect(await store.credentials.liveApiKey('k2')).toBeNull();
      expect((await store.credentials.listApiKeys(u.id)).map((k) => k.id).sort()).toEqual([k1.id, k2!.id].sort());
    });

    it('lists accounts made in one batch in the order they were given, as one by one would', async () => {
      const u = await user();
      const names = Array.from({ length: 60 }, (_, i) => `batch ${String(i).padStart(2, '0')}`);
      await store.accounts.createMany(
        names.map((name, i) => ({
          userId: u.id,
          platform: 'sim',
          role: 'slave',
          name,
          brokerAccountId: `batch-${u.id}-${i}`,
          brokerAccountNumber: String(i),
        })),
      );
      expect((await store.accounts.list(u.id)).map((a) => a.name)).toEqual(names);
    });

    it('holds one connection per broker identity deployment-wide; a reconnect updates that connection', async () => {
      const u = await user();
      const other = await user();
      const id = `bid-${newId('acc')}`;
      const a = await store.accounts.create({
        userId: u.id,
        platform: 'platformc',
        role: 'slave',
        name: 'C',
        brokerAccountId: id,
        brokerAccountNumber: '7',
        environment: 'live',
      });
      expect(a.brokerIdentity).toBe(`platformc:live:${id}`);
      expect((await store.accounts.byIdentity(`platformc:live:${id}`))?.id).toBe(a.id);
      // Another user, or the same user under another name of the same environment: the unique index refuses it.
      await expect(
        store.accounts.create({
          userId: other.id,
          platform: 'platformc',
          role: 'slave',
          name: 'C2',
          brokerAccountId: id,
          brokerAccountNumber: '7',
          environment: 'LIVE',
        }),
      ).rejects.toMatchObject({ code: 'account_already_connected' });
      await store.accounts.setStatus(a.id, 'reconnect_required', 'token revoked');
      await store.accounts.reconnect(a.id, { brokerAccountId: id, credentialsEnc: 'sealed-2' });
      expect(await store.accounts.byId(a.id)).toMatchObject({
        status: 'connected',
        statusReason: null,
        brokerIdentity: `platformc:live:${id}`,
      });
      expect(await store.accounts.credentialsEnc(a.id)).toBe('sealed-2');
      // A chosen status (a pause) survives a reconnect.
      await store.accounts.setStatus(a.id, 'paused', 'paused by the user');
      await store.accounts.reconnect(a.id, { brokerAccountId: id, credentialsEnc: 'sealed-3' });
      expect(await store.accounts.byId(a.id)).toMatchObject({ status: 'paused', statusReason: 'paused by the user' });
    });

    it('writes health for many accounts in one call (health always, funds where read), credentials read together', async () => {
      const u = await user();
      const mk = (i: number) =>
        store.accounts.create({
          userId: u.id,
          platform: 'sim',
          role: 'slave',
          name: `h${i}`,
          brokerAccountId: `hb-${newId('acc')}`,
          brokerAccountNumber: String(i),
          balance: new Decimal(100),
          equity: new Decimal(100),
          credentialsEnc: `sealed-${i}`,
        });
      const [a, b] = [await mk(1), await mk(2)];
      const health = { ...a.health, state: 'degraded' as const, checkedAt: new Date(0).toISOString(), lastError: 'x' };
      await store.accounts.applyHealth([
        { id: a.id, health, funds: { balance: new Decimal('250.5'), equity: new Decimal('240') } },
        { id: b.id, health: { ...health, lastError: 'y' }, funds: null },
      ]);
      const [ra, rb] = [await store.accounts.byId(a.id), await store.accounts.byId(b.id)];
      expect(ra!.health).toEqual(health);
      expect([ra!.balance?.toString(), ra!.equity?.toString()]).toEqual(['250.5', '240']);
      expect(rb!.health.lastError).toBe('y');
      expect(rb!.balance?.toString()).toBe('100');
      expect((await store.accounts.list(u.id)).find((x) => x.id === a.id)!.health).toEqual(health);
      expect(await Promise.all([a.id, b.id, 'acc_unknown'].map((id) => store.accounts.credentialsEnc(id)))).toEqual([
        'sealed-1',
        'sealed-2',
        null,
      ]);
    });

    it('returns an account only to its owner, and groups with master, slaves and rules', async () => {
      const u = await user();
      const other = await user();
      const g = await store.accounts.createGroup(u.id, 'main');
      const m = await store.accounts.create({
        userId: u.id,
        platform: 'sim',
        role: 'master',
        name: 'M',
        groupId: g.id,
        brokerAccountId: 'b1',
        brokerAccountNumber: '1001',
        balance: new Decimal('10000.5'),
      });
      const s = await store.accounts.create({
        userId: u.id,
        platform: 'sim',
        role: 'slave',
        name: 'S',
        groupId: g.id,
        brokerAccountId: 'b2',
        brokerAccountNumber: '1002',
      });
      await store.accounts.setRule(s.id, withDefaults({ sizing: { mode: 'fixed', volume: '0.05' } }));
      expect((await store.accounts.owned(u.id, m.id))?.balance?.toString()).toBe('10000.5');
      expect(await store.accounts.owned(other.id, m.id)).toBeNull();
      expect(await store.accounts.ownedGroup(other.id, g.id)).toBeNull();
      const [view] = await store.accounts.listGroups(u.id);
      expect(view?.master?.id).toBe(m.id);
      expect(view?.slaves.map((x) => [x.id, x.rule.sizing])).toEqual([[s.id, { mode: 'fixed', volume: '0.05' }]]);
      await store.accounts.setStatus(s.id, 'paused', 'by user');
      expect((await store.accounts.owned(u.id, s.id))?.status).toBe('paused');
      expect(await store.accounts.list(other.id)).toEqual([]);
    });

    it("reads a group's Slaves for a copy: its live Slaves oldest first, each with its stored rule or the defaults", async () => {
      const { userId, master, slaves } = await seedAccounts(store, 'sog', 5);
      const [a, b, c, d, e] = slaves as [Account, Account, Account, Account, Account];
      const g = await store.accounts.createGroup(userId, 'copy');
      const elsewhere = await store.accounts.createGroup(userId, 'elsewhere');
      await store.accounts.setRoleAndGroup(master.id, 'master', g.id);
      for (const s of [a, b, c, d]) await store.accounts.setRoleAndGroup(s.id, 'slave', g.id);
      await store.accounts.setRoleAndGroup(e.id, 'slave', elsewhere.id);
      const fixed = withDefaults({ sizing: { mode: 'fixed', volume: '0.05' }, symbolMap: { EURUSD: 'EURUSD.m' } });
      await store.accounts.setRule(a.id, fixed);
      await store.accounts.setRule(e.id, withDefaults({ reverse: true }));
      // A disabled Slave is still read: the planner skips it with its reason.
      await store.accounts.setStatus(b.id, 'disabled', 'by user');
      await store.accounts.remove(c.id);
      // Created in one statement: one created_at, so their order is the ids'.
      await store.accounts.createMany(
        ['x', 'y', 'z'].map((k) => ({
          userId,
          platform: 'sim' as const,
          role: 'slave' as const,
          name: k,
          groupId: g.id,
          brokerAccountId: `sog-${k}`,
          brokerAccountNumber: k,
        })),
      );

      const got = await store.accounts.slavesOfGroup(userId, g.id);
      expect(got.map((x) => x.account.id).slice(0, 3)).toEqual([a.id, b.id, d.id]);
      expect(got.map((x) => x.account.name).slice(3)).toEqual(['x', 'y', 'z']);
      expect(got.map((x) => x.rule).slice(0, 3)).toEqual([fixed, withDefaults(undefined), withDefaults(undefined)]);
      expect(got[1]?.account.status).toBe('disabled');
      expect(got[0]?.account).toEqual(await store.accounts.owned(userId, a.id));
      // The same as the group's list (Slaves only) and their rules, as the copy read them before.
      const listed = (await store.accounts.list(userId, { groupId: g.id })).filter((x) => x.role === 'slave');
      const rules = await store.accounts.rulesFor(listed.map((x) => x.id));
      expect(got).toEqual(
        listed.map((account) => ({ account, rule: rules.get(account.id) ?? withDefaults(undefined) })),
      );
      // Read again (on the embedded store, every rule from memory now, the defaults' too): the same.
      expect(await store.accounts.slavesOfGroup(userId, g.id)).toEqual(got);
      // Another user's id never reads the group; a rule written after a read is seen by the next.
      expect(await store.accounts.slavesOfGroup((await user()).id, g.id)).toEqual([]);
      await store.accounts.setRule(d.id, withDefaults({ copyStopLoss: false }));
      expect((await store.accounts.slavesOfGroup(userId, g.id))[2]?.rule.copyStopLoss).toBe(false);
    });

    it('records a trade and all its intents atomically, with unique tags', async () => {
      const u = await user();
      const m = await store.accounts.create({
        userId: u.id,
        platform: 'sim',
        role: 'master',
        name: 'M',
        brokerAccountId: 'x1',
        brokerAccountNumber: '1',
      });
      const s = await store.accounts.create({
        userId: u.id,
        platform: 'sim',
        role: 'slave',
        name: 'S',
        brokerAccountId: 'x2',
        brokerAccountNumber: '2',
      });
      const t = await store.trades.insertTrade({
        id: newId('trd'),
        userId: u.id,
        masterAccountId: m.id,
        source: 'api',
        action: 'open' as const,
        symbol: 'EURUSD',
        side: 'buy',
        orderType: 'market',
        volume: dec('0.10'),
        tag: newId('act'),
        status: 'pending',
      });
      const intent = (tag: string) => ({
        id: newId('int'),
        tradeId: t.id,
        slaveAccountId: s.id,
        tag,
        action: 'open' as const,
        symbol: 'EURUSD',
        side: 'buy' as const,
        plannedVolume: dec('0.2'),
        state: 'planned' as const,
      });
      const t2 = await store.trades.insertTrade({
        id: newId('trd'),
        userId: u.id,
        masterAccountId: m.id,
        source: 'api',
        action: 'open' as const,
        symbol: 'EURUSD',
        side: 'buy',
        orderType: 'market',
        volume: dec('0.10'),
        tag: newId('act'),
        status: 'pending',
      });
      // A duplicate tag aborts the whole batch and the trade update with it.
      await store.trades.recordIntents(t2.id, { status: 'unresolved' }, []);
      await expect(
        store.trades.recordIntents(t2.id, { status: 'accepted' }, [intent('tag-x'), intent('tag-x')]),
      ).rejects.toThrow();
      expect((await store.trades.ownedTrade(u.id, t2.id))?.status).toBe('unresolved');
      expect(await store.trades.recordIntents(t.id, { status: 'accepted' }, [intent('tag-a'), intent('tag-b')])).toBe(
        true,
      );
      expect((await store.trades.intentsOfTrade(t.id)).map((i) => i.plannedVolume?.toString())).toEqual(['0.2', '0.2']);
      // A trade fanned out once is never fanned out again (the route and the settle loop after a crash race here).
      expect(await store.trades.recordIntents(t.id, { status: 'changed' }, [intent('tag-c')])).toBe(false);
      expect((await store.trades.ownedTrade(u.id, t.id))?.status).toBe('accepted');
      expect(await store.trades.intentsOfTrade(t.id)).toHaveLength(2);
      expect(await store.trades.ownedTrade('usr_other', t.id)).toBeNull();
    });

    it('enforces the intent state machine on every write: a second outcome for a settled intent is refused with nothing written', async () => {
      const u = await user();
      const m = await store.accounts.create({
        userId: u.id,
        platform: 'sim',
        role: 'master',
        name: 'M',
        brokerAccountId: 'sm1',
        brokerAccountNumber: '1',
      });
      const s = await store.accounts.create({
        userId: u.id,
        platform: 'sim',
        role: 'slave',
        name: 'S',
        brokerAccountId: 'sm2',
        brokerAccountNumber: '2',
      });
      const t = await store.trades.insertTrade({
        id: newId('trd'),
        userId: u.id,
        masterAccountId: m.id,
        source: 'api',
        action: 'open' as const,
        symbol: 'EURUSD',
        side: 'buy',
        orderType: 'market',
        volume: dec('0.1'),
        tag: newId('act'),
        status: 'pending',
      });
      const intent = (state: IntentState) => ({
        id: newId('int'),
        tradeId: t.id,
        slaveAccountId: s.id,
        tag: newId('act'),
        action: 'open' as const,
        symbol: 'EURUSD',
        side: 'buy' as const,
        plannedVolume: dec('0.1'),
        state,
      });
      // Recorded only as planned, skipped or denied.
      await expect(
        store.trades.recordIntents(t.id, { status: 'accepted' }, [intent('confirmed')]),
      ).rejects.toBeInstanceOf(IntentTransitionError);
      const i = intent('planned');
      expect(await store.trades.recordIntents(t.id, { status: 'accepted' }, [i])).toBe(true);
      const link = (pos: string) => ({
        op: 'upsert' as const,
        link: {
          id: newId('act'),
          kind: 'position' as const,
          masterAccountId: m.id,
          masterPositionId: 'mp1',
          slaveAccountId: s.id,
          slavePositionId: pos,
          intentId: i.id,
          volume: dec('0.1'),
        },
      });
      const ev = { userId: u.id, accountId: s.id, type: 'copy.confirmed', payload: {} };
      await store.trades.applyOutcomes([
        { intentId: i.id, update: { state: 'confirmed' }, links: [link('sp1')], events: [ev] },
      ]);
      const events = (await store.events.after(u.id, 0, 100)).length;
      // Confirmed is terminal: a late second outcome (or a resend) is refused, and its links and events with it.
      await expect(
        store.trades.applyOutcomes([
          { intentId: i.id, update: { state: 'confirmed' }, links: [link('sp2')], events: [ev] },
        ]),
      ).rejects.toBeInstanceOf(IntentTransitionError);
      await expect(store.trades.updateIntent(i.id, { state: 'sent' })).rejects.toThrow(
        /cannot go from confirmed to sent/,
      );
      expect((await store.trades.intentById(i.id))?.state).toBe('confirmed');
      expect((await store.trades.openLinksOfSlave(s.id)).map((l) => l.slavePositionId)).toEqual(['sp1']);
      expect(await store.events.after(u.id, 0, 100)).toHaveLength(events);
      // The settle loop's moves are allowed: unresolved -> sent (a resend after proof of absence) -> confirmed.
      const watched = newId('trd');
      const j = { ...intent('planned'), tradeId: watched };
      expect(await store.trades.recordAction(tradeRow(u.id, m.id, { id: watched, status: 'accepted' }), [j], [])).toBe(
        true,
      );
      for (const state of ['unresolved', 'sent', 'confirmed'] as const)
        await store.trades.updateIntent(j.id, { state });
      expect((await store.trades.intentById(j.id))?.state).toBe('confirmed');
    });

    it('records an intent only with the trade it names (copy_intents has no foreign key): else nothing is written', async () => {
      const { u, m, s } = await masterAndSlave('fk');
      const trade = (status: string) => tradeRow(u.id, m.id, { actionId: newId('act'), status });
      const intent = (tradeId: string) => intentRow(tradeId, s.id);
      // The one-statement record (no events), the transaction (with events), and an order route's fan-out.
      const t1 = trade('recorded');
      await expect(store.trades.recordAction(t1, [intent(t1.id), intent('trd_elsewhere')], [])).rejects.toThrow(
        /names trade trd_elsewhere/,
      );
      const ev = { userId: u.id, accountId: m.id, type: 'trade.accepted', payload: {} };
      const t2 = trade('recorded');
      await expect(store.trades.recordAction(t2, [intent('trd_elsewhere')], [], [ev])).rejects.toThrow(/names trade/);
      const t3 = await store.trades.insertTrade(trade('pending'));
      await expect(
        store.trades.recordIntents(t3.id, { status: 'accepted' }, [intent(t3.id), intent(t1.id)]),
      ).rejects.toThrow(/names trade/);
      for (const t of [t1, t2]) expect(await store.trades.actionRecorded(t.actionId!)).toBe(false);
      expect((await store.trades.ownedTrade(u.id, t3.id))?.status).toBe('pending');
      expect(await store.trades.intentsOfTrade(t3.id)).toHaveLength(0);
      expect(await store.trades.intentsOfTrade('trd_elsewhere')).toHaveLength(0);
      // The same rows naming their own trade go in.
      const t4 = trade('recorded');
      expect(await store.trades.recordAction(t4, [intent(t4.id), intent(t4.id)], [])).toBe(true);
      expect(await store.trades.intentsOfTrade(t4.id)).toHaveLength(2);
    });

    it("reads a new Master item's row and what carries its tag in one call, as the three reads one by one give", async () => {
      const { u, m, s } = await masterAndSlave('itag');
      const t = tradeRow(u.id, m.id);
      const j = intentRow(t.id, s.id);
      expect(await store.trades.recordAction(t, [j], [])).toBe(true);
      await store.trades.upsertMasterItem({
        accountId: m.id,
        kind: 'position',
        itemId: 'mp_itag',
        symbol: 'EURUSD',
        side: 'buy',
        orderType: 'market',
        volume: dec('0.5'),
        tag: 'other-tool',
        open: true,
        seq: 2,
        originTradeId: t.id,
      });
      const oneByOne = async (itemId: string, tag: string) => ({
        item: await store.trades.masterItem(m.id, 'position', itemId),
        trade: await store.trades.tradeByTag(tag),
        intent: await store.trades.intentByTag(tag),
      });
      for (const [itemId, tag] of [
        ['mp_itag', t.tag],
        ['mp_itag', j.tag],
        ['mp_itag', 'nobody-carries-this'],
        ['mp_none', t.tag],
        ['mp_none', 'nobody-carries-this'],
      ] as const)
        expect(await store.trades.itemAndTag(m.id, 'position', itemId, tag)).toEqual(await oneByOne(itemId, tag));
      const both = await store.trades.itemAndTag(m.id, 'position', 'mp_itag', t.tag);
      expect([both.item?.seq, both.item?.volume.toString(), both.trade?.id, both.intent]).toEqual([
        2,
        '0.5',
        t.id,
        null,
      ]);
      expect((await store.trades.itemAndTag(m.id, 'order', 'mp_itag', j.tag)).item).toBeNull();
      expect((await store.trades.itemAndTag(m.id, 'position', 'mp_none', j.tag)).intent?.id).toBe(j.id);
    });

    it('records a fan-out whose rows share Decimals: each row reads back its own values, nulls as null', async () => {
      const { u, m, s } = await masterAndSlave('fan');
      const t = {
        id: newId('trd'),
        userId: u.id,
        masterAccountId: m.id,
        source: 'watcher',
        action: 'open' as const,
        symbol: 'EURUSD',
        side: 'buy' as const,
        orderType: 'market' as const,
        volume: dec('1'),
        tag: newId('act'),
        status: 'recorded',
      };
      // One stop Decimal for every row, as a fan-out's planning hands out.
      const stop = dec('1.09500');
      const volumes = ['0.5', '0.01', '12.34', '0.1'];
      const rows = volumes.map((v, i) => ({
        id: newId('int'),
        tradeId: t.id,
        slaveAccountId: s.id,
        tag: newId('act'),
        action: 'open' as const,
        symbol: 'EURUSD',
        side: 'buy' as const,
        plannedVolume: dec(v),
        plannedPrice: i === 0 ? null : dec('1.1'),
        stopLoss: stop,
        takeProfit: i === 2 ? dec('1.2') : null,
        state: i === 3 ? ('skipped' as const) : ('planned' as const),
        ...(i === 3 ? { skipReason: 'x: y' } : {}),
      }));
      expect(await store.trades.recordAction(t, rows, [])).toBe(true);
      const back = new Map((await store.trades.intentsOfTrade(t.id)).map((r) => [r.id, r]));
      rows.forEach((r, i) => {
        const b = back.get(r.id)!;
        expect(b.plannedVolume?.toString()).toBe(volumes[i]);
        expect(b.plannedPrice?.toString() ?? null).toBe(i === 0 ? null : '1.1');
        expect(b.stopLoss?.toString()).toBe('1.095');
        expect(b.takeProfit?.toString() ?? null).toBe(i === 2 ? '1.2' : null);
        expect([b.state, b.skipReason, b.tag, b.attempts]).toEqual([r.state, i === 3 ? 'x: y' : null, r.tag, 0]);
      });
    });

    it('records intents column by column: one row, text that needs quoting, JSON and attempts in some rows only, each read back as written', async () => {
      const { u, m, s } = await masterAndSlave('cols');
      // One row: every column is the same in every row, so nothing varies.
      const t1 = tradeRow(u.id, m.id);
      const one = {
        ...intentRow(t1.id, s.id),
        plannedVolume: dec('0.3'),
        latency: { plan: 1.5 },
        attempts: 2,
        targetId: 'p"1',
      };
      expect(await store.trades.recordAction(t1, [one], [])).toBe(true);
      const [b1] = await store.trades.intentsOfTrade(t1.id);
      expect([b1!.plannedVolume?.toString(), b1!.latency, b1!.attempts, b1!.targetId, b1!.stopLoss]).toEqual([
        '0.3',
        { plan: 1.5 },
        2,
        'p"1',
        null,
      ]);

      // Varying columns go as arrays: quotes, backslashes, braces, commas and NULL-looking text must survive.
      const t2 = tradeRow(u.id, m.id, { source: 'api', status: 'pending' });
      const reasons = ['a "quoted", {braced} \\ reason', 'NULL', null, ''];
      const rows = reasons.map((reason, i) => ({
        ...intentRow(t2.id, s.id),
        ...(reason === null ? {} : { state: 'skipped' as const, skipReason: reason }),
        plannedVolume: dec('0.1'),
        ...(i % 2 === 0 ? { latency: { plan: i, note: 'x"y' } } : {}),
        ...(i === 1 ? { attempts: 3 } : {}),
        ...(i === 2 ? { targetId: 'pos,7' } : {}),
      }));
      await store.trades.insertTrade(t2);
      expect(await store.trades.recordIntents(t2.id, { status: 'accepted' }, rows)).toBe(true);
      const back = new Map((await store.trades.intentsOfTrade(t2.id)).map((r) => [r.id, r]));
      rows.forEach((r, i) => {
        const b = back.get(r.id)!;
        expect([b.state, b.skipReason, b.latency, b.attempts, b.targetId, b.plannedVolume?.toString()]).toEqual([
          reasons[i] === null ? 'planned' : 'skipped',
          reasons[i],
          i % 2 === 0 ? { plan: i, note: 'x"y' } : null,
          i === 1 ? 3 : 0,
          i === 2 ? 'pos,7' : null,
          '0.1',
        ]);
      });
    });
    it('records intents into the narrow table, reads them alike there and in copy_intents, and moves them after the next outcome batch or by the sweep', async () => {
      const { u, m, s } = await masterAndSlave('recent');
      /** Which table holds each of the trade's intents (copy_intents reads include its child's rows). */
      const where = async (tradeId: string) => {
        const res = (await store.database.db.execute(
          sql`select tableoid::regclass::text as t from copy_intents where trade_id = ${tradeId}`,
        )) as unknown as { rows: Array<{ t: string }> } | Array<{ t: string }>;
        return (Array.isArray(res) ? res : res.rows).map((r) => r.t);
      };
      const t = tradeRow(u.id, m.id);
      const rows = Array.from({ length: 3 }, () => intentRow(t.id, s.id));
      expect(await store.trades.recordAction(t, rows, [])).toBe(true);
      expect(await where(t.id)).toEqual(['copy_intents_recent', 'copy_intents_recent', 'copy_intents_recent']);
      const reads = async () => [
        (await store.trades.intentsOfTrade(t.id)).map((r) => r.id).sort(),
        (await store.trades.intentById(rows[1]!.id))?.id,
        (await store.trades.intentByTag(rows[2]!.tag))?.id,
        (await store.trades.intentsOfAccount(s.id, { limit: 10 })).map((r) => r.id).sort(),
        (await store.trades.intentsInState('planned')).filter((r) => r.tradeId === t.id).length,
      ];
      const before = await reads();
      expect(before).toEqual([rows.map((r) => r.id).sort(), rows[1]!.id, rows[2]!.id, rows.map((r) => r.id).sort(), 3]);

      // The next outcome batch writes on the narrow rows, then moves them, as written, to copy_intents proper.
      await store.trades.applyOutcomes([
        { intentId: rows[0]!.id, update: { state: 'confirmed', brokerOrderId: 'o1' } },
      ]);
      expect(await where(t.id)).toEqual(['copy_intents', 'copy_intents', 'copy_intents']);
      const moved = await store.trades.intentById(rows[0]!.id);
      expect([moved?.state, moved?.brokerOrderId]).toEqual(['confirmed', 'o1']);
      expect((await reads()).slice(0, 4)).toEqual(before.slice(0, 4));

      // Intents no outcome batch moves (a crash between record and move): readable where they are, moved by the sweep
      // once old enough, not before.
      const t2 = tradeRow(u.id, m.id, { source: 'api', status: 'pending' });
      const rows2 = Array.from({ length: 2 }, () => intentRow(t2.id, s.id));
      await store.trades.insertTrade(t2);
      expect(await store.trades.recordIntents(t2.id, { status: 'accepted' }, rows2)).toBe(true);
      expect(await store.trades.moveRecentOlderThan(60_000)).toBe(0);
      expect(await where(t2.id)).toEqual(['copy_intents_recent', 'copy_intents_recent']);
      const sweep = store.startIntentSweep({ everyMs: 3_600_000, olderThanMs: 0 });
      await sweep.run();
      await sweep.stop();
      expect(await where(t2.id)).toEqual(['copy_intents', 'copy_intents']);
      expect((await store.trades.intentsOfTrade(t2.id)).map((r) => r.id).sort()).toEqual(rows2.map((r) => r.id).sort());
    });
    it('writes a batch of outcomes set-based: each intent its own fields, links in order per link, all or nothing', async () => {
      const { u, m, s } = await masterAndSlave('bat');
      const t = tradeRow(u.id, m.id);
      const rows = Array.from({ length: 4 }, () => intentRow(t.id, s.id));
      expect(await store.trades.recordAction(t, rows, [])).toBe(true);
      const key = (p: string) => ({ slaveAccountId: s.id, kind: 'position' as const, slavePositionId: p });
      const up = (p: string, intentId: string, v: string) => ({
        op: 'upsert' as const,
        link: {
          id: newId('act'),
          kind: 'position' as const,
          masterAccountId: m.id,
          masterPositionId: 'mpb',
          slaveAccountId: s.id,
          slavePositionId: p,
          intentId,
          volume: dec(v),
        },
      });
      const [a, b, c, d] = rows as [(typeof rows)[0], (typeof rows)[0], (typeof rows)[0], (typeof rows)[0]];
      await store.trades.applyOutcomes([
        { trade: { id: t.id, set: { status: 'accepted' } } },
        {
          intentId: a.id,
          update: { state: 'confirmed', brokerOrderId: 'o1', fillPrice: dec('1.1'), latency: { send: 1 }, attempts: 1 },
          links: [up('bp1', a.id, '0.1')],
        },
        // The same Slave position twice in one batch (a netting Slave): the second adds to the first.
        { intentId: b.id, update: { state: 'confirmed', brokerOrderId: 'o2' }, links: [up('bp1', b.id, '0.05')] },
        {
          intentId: c.id,
          update: { state: 'rejected', outcome: { kind: 'rejected', code: 'x' } },
          links: [up('bp2', c.id, '0.3'), { op: 'adjust', key: key('bp2'), by: dec('-0.1') }],
        },
        {
          intentId: d.id,
          update: { state: 'unresolved' },
          links: [up('bp3', d.id, '0.1'), { op: 'close', key: key('bp3'), reason: 'master_closed' }],
        },
      ]);
      expect((await store.trades.tradeById(t.id))?.status).toBe('accepted');
      const got = await store.trades.intentById(a.id);
      expect([got?.state, got?.brokerOrderId, got?.fillPrice?.toString(), got?.attempts, got?.latency]).toEqual([
        'confirmed',
        'o1',
        '1.1',
        1,
        { send: 1 },
      ]);
      // Fields a write does not name stay as they were.
      const other = await store.trades.intentById(b.id);
      expect([other?.brokerOrderId, other?.fillPrice, other?.attempts, other?.plannedVolume?.toString()]).toEqual([
        'o2',
        null,
        0,
        '0.1',
      ]);
      expect((await store.trades.intentById(c.id))?.outcome).toEqual({ kind: 'rejected', code: 'x' });
      expect((await store.trades.intentById(d.id))?.state).toBe('unresolved');
      const open = await store.trades.openLinksOfSlave(s.id);
      expect(open.map((l) => [l.slavePositionId, l.volume?.toString()]).sort()).toEqual([
        ['bp1', '0.15'],
        ['bp2', '0.2'],
      ]);
      // One write the state machine refuses fails the whole batch: nothing of the others lands.
      const t2 = tradeRow(u.id, m.id);
      const e = { ...a, id: newId('int'), tradeId: t2.id, tag: newId('act') };
      expect(await store.trades.recordAction(t2, [e], [])).toBe(true);
      await expect(
        store.trades.applyOutcomes([
          { intentId: e.id, update: { state: 'confirmed' }, links: [up('bp9', e.id, '1')] },
          { intentId: a.id, update: { state: 'rejected' } },
        ]),
      ).rejects.toBeInstanceOf(IntentTransitionError);
      expect((await store.trades.intentById(e.id))?.state).toBe('planned');
      expect((await store.trades.openLinksOfSlave(s.id)).map((l) => l.slavePositionId).sort()).toEqual(['bp1', 'bp2']);
    });

    it('reads a link volume resized in SQL as a Decimal (PostgreSQL keeps the scale: "0.20" reads as 0.2)', async () => {
      const { m, s } = await masterAndSlave('dec');
      const link = (volume: string) => ({
        op: 'upsert' as const,
        link: {
          id: newId('act'),
          kind: 'position' as const,
          masterAccountId: m.id,
          masterPositionId: 'mp1',
          slaveAccountId: s.id,
          slavePositionId: 'sp1',
          volume: dec(volume),
        },
      });
      const key = { slaveAccountId: s.id, kind: 'position' as const, slavePositionId: 'sp1' };
      const volume = async () => (await store.trades.openLinksOfSlave(s.id))[0]?.volume;
      // An increase on a netting Slave adds in SQL: 0.15 + 0.05 is the numeric 0.20.
      await store.trades.applyLinkChanges([link('0.15')]);
      await store.trades.applyLinkChanges([link('0.05')]);
      expect((await volume())?.toString()).toBe('0.2');
      await store.trades.applyLinkChanges([{ op: 'adjust', key, by: dec('-0.05') }]);
      expect((await volume())?.toString()).toBe('0.15');
      await store.trades.applyLinkChanges([{ op: 'adjust', key, by: dec('-1') }]);
      expect((await volume())?.isZero()).toBe(true);
    });

    it('writes links whose broker ids hold what an array literal quotes (the upsert sends each column as one array)', async () => {
      const { m, s } = await masterAndSlave('quote');
      const ids = ['a,b', 'c"d', 'e\\f', '{g}', 'NULL', ' h '];
      await store.trades.applyLinkChanges(
        ids.map((p, i) => ({
          op: 'upsert' as const,
          link: {
            id: newId('act'),
            kind: 'position' as const,
            masterAccountId: m.id,
            masterPositionId: `m ${p}`,
            slaveAccountId: s.id,
            slavePositionId: p,
            intentId: i % 2 === 0 ? null : newId('int'),
            volume: dec(`0.${i + 1}`),
          },
        })),
      );
      const got = (await store.trades.openLinksOfSlave(s.id)).map((l) => [
        l.slavePositionId,
        l.masterPositionId,
        l.intentId === null,
        l.volume?.toString(),
      ]);
      expect(got.sort()).toEqual(ids.map((p, i) => [p, `m ${p}`, i % 2 === 0, `0.${i + 1}`]).sort());
    });

    it('removes an account softly: its trades and intents stay, nothing settles or recovers on it, its broker account connects again', async () => {
      const u = await user();
      const g = await store.accounts.createGroup(u.id, 'soft');
      const acc = (role: 'master' | 'slave', n: string) =>
        store.accounts.create({
          userId: u.id,
          platform: 'sim',
          role,
          name: `R${n}`,
          groupId: g.id,
          brokerAccountId: `soft${n}`,
          brokerAccountNumber: n,
          credentialsEnc: 'sealed',
        });
      const m = await acc('master', '1');
      const s = await acc('slave', '2');
      const t = await store.trades.insertTrade({
        id: newId('trd'),
        userId: u.id,
        masterAccountId: m.id,
        source: 'api',
        action: 'open' as const,
        symbol: 'EURUSD',
        side: 'buy',
        orderType: 'market',
        volume: dec('0.1'),
        tag: newId('act'),
        status: 'pending',
      });
      await store.trades.recordIntents(t.id, { status: 'accepted' }, [
        {
          id: newId('int'),
          tradeId: t.id,
          slaveAccountId: s.id,
          tag: newId('act'),
          action: 'open' as const,
          symbol: 'EURUSD',
          side: 'buy',
          plannedVolume: dec('0.1'),
          state: 'planned' as const,
        },
      ]);
      expect((await store.trades.unsettledIntents()).map((r) => r.intent.slaveAccountId)).toContain(s.id);

      await store.accounts.remove(s.id);
      await store.accounts.remove(m.id);

      expect(await store.trades.tradeById(t.id)).not.toBeNull();
      expect(await store.trades.intentsOfTrade(t.id)).toHaveLength(1);
      expect((await store.trades.unsettledIntents()).map((r) => r.intent.slaveAccountId)).not.toContain(s.id);
      expect((await store.trades.apiTradesAwaitingMaster()).map((r) => r.id)).not.toContain(t.id);
      expect(await store.accounts.list(u.id)).toEqual([]);
      expect(await store.accounts.owned(u.id, m.id)).toBeNull();
      expect(await store.accounts.countActive(u.id)).toBe(0);
      expect((await store.accounts.groupView(u.id, g.id))?.master).toBeNull();
      expect(await store.accounts.credentialsEnc(m.id)).toBeNull();
      expect(await store.accounts.byId(m.id)).toMatchObject({ name: 'R1', brokerIdentity: null, groupId: null });
      expect((await store.accounts.namesOf([m.id, s.id])).get(s.id)).toBe('R2');
      // The same broker account, same owner: a new connection (the old row keeps its broker columns as history).
      const again = await acc('master', '1');
      expect(again.id).not.toBe(m.id);
    });

    it('limits hits per bucket in a sliding window and tells how long to wait', async () => {
      const b = `connect:${newId('usr')}`;
      const t0 = new Date();
      for (let i = 0; i < 3; i++)
        expect((await store.requests.hit(b, 3, 300_000, new Date(t0.getTime() + i * 1000))).allowed).toBe(true);
      const denied = await store.requests.hit(b, 3, 300_000, new Date(t0.getTime() + 10_000));
      expect(denied).toEqual({ allowed: false, retryAfterSec: 290 });
      expect((await store.requests.hit(b, 3, 300_000, new Date(t0.getTime() + 300_001))).allowed).toBe(true);
    });

    it('appends events with dense sequence numbers per account, also from concurrent transactions', async () => {
      const u = await user();
      const ev = (accountId: string | null, n: number) =>
        Array.from({ length: n }, () => ({ userId: u.id, accountId, type: 'webhook.test', payload: {} }));
      const batch = await store.events.emit([...ev('acc_a', 3), ...ev(null, 2), ...ev('acc_b', 1)]);
      expect(batch.map((e) => `${e.accountId}:${e.seq}`)).toEqual([
        'acc_a:1',
        'acc_a:2',
        'acc_a:3',
        'null:1',
        'null:2',
        'acc_b:1',
      ]);
      await Promise.all(Array.from({ length: 8 }, () => store.events.emit(ev('acc_a', 5))));
      const all = (await store.events.after(u.id, 0, 1000))
        .filter((e) => e.accountId === 'acc_a')
        .map((e) => e.seq)
        .sort((a, b) => a - b);
      expect(all).toEqual(Array.from({ length: 43 }, (_, i) => i + 1));
    });

    it('appends a batch inside a write as one statement: every value, payload and null kept, in cursor order', async () => {
      const u = await user();
      const payloads = [
        { a: 'quote " and backslash \\ and comma, brace } {', n: 1.5, nested: { list: [1, null, 'x'] } },
        { text: 'unicode é ü 漢字 and a \n newline', empty: '' },
        {},
        { big: 'y'.repeat(5000), bool: false, nil: null },
      ];
      const evs = payloads.map((payload, i) => ({
        userId: u.id,
        accountId: i === 2 ? null : 'acc_x',
        type: `copy.t${i}`,
        payload,
        ...(i === 3 ? { schemaVersion: 2 } : {}),
      }));
      let statements = 0;
      await store.database.db.transaction(async (tx) => {
        // A statement reaches the driver through execute, insert, or as a named statement (executeNamed: the
        // session's prepareQuery).
        const counted = <T extends object>(o: T, names: string[]): T =>
          new Proxy(o, {
            get: (t, k) => {
              const v = (t as never as Record<string | symbol, unknown>)[k];
              if (k === 'session') return counted(v as object, ['prepareQuery']);
              if (typeof v !== 'function' || !names.includes(k as string)) return v;
              return (...a: unknown[]) => {
                statements++;
                return (v as (...x: unknown[]) => unknown).apply(t, a);
              };
            },
          });
        const counting = counted(tx, ['execute', 'insert']);
        await store.events.append(counting as never, evs);
      });
      // The counters' upsert and the insert.
      expect(statements).toBe(2);
      const back = await store.events.after(u.id, 0, 100);
      expect(back.map((e) => [e.type, e.accountId, e.seq, e.schemaVersion, e.payload])).toEqual(
        evs.map((e, i) => [e.type, e.accountId, i === 3 ? 3 : i === 2 ? 1 : i + 1, i === 3 ? 2 : 1, e.payload]),
      );
      expect(new Set(back.map((e) => e.id)).size).toBe(4);
      expect(back.every((e, i) => i === 0 || e.cursor > back[i - 1]!.cursor)).toBe(true);
    });

    it('keeps request records per user', async () => {
      const u = await user();
      await store.requests.record({
        id: newId('req'),
        userId: u.id,
        method: 'POST',
        route: '/v1/x',
        path: '/v1/x',
        status: 201,
        bodyDigest: 'abc',
        response: { ok: 1 },
      });
      const [r] = await store.requests.list(u.id, { limit: 10 });
      expect(r).toMatchObject({ method: 'POST', status: 201, bodyDigest: 'abc', response: { ok: 1 } });
      expect(await store.requests.byId('usr_other', r!.id)).toBeNull();
    });

    it('writes a buffered batch of request records in one statement, every value kept as sent', async () => {
      const u = await user();
      const odd = 'quote " backslash \\ comma , brace { } NULL é 😀';
      const sent = [
        { response: { nested: { list: [1, 'two', null], text: odd } }, bodyDigest: odd, key: odd, ms: '12.345' },
        { response: null, bodyDigest: null, key: null, ms: '0.001' },
        { response: 'NULL', bodyDigest: 'NULL', key: '', ms: null },
      ];
      const ids = sent.map(() => newId('req'));
      for (const [i, r] of sent.entries())
        store.requests.enqueue(
          {
            id: ids[i]!,
            userId: i === 1 ? null : u.id,
            credentialKind: i === 0 ? 'api_key' : null,
            method: 'GET',
            route: '/v1/accounts',
            path: `/v1/accounts/${odd}`,
            status: 200 + i,
            bodyDigest: r.bodyDigest,
            response: r.response,
            durationMs: r.ms,
            idempotencyKey: r.key,
          },
          (err) => {
            throw err;
          },
        );
      await store.requests.flush();
      const first = await store.requests.byId(u.id, ids[0]!);
      expect(first).toMatchObject({
        credentialKind: 'api_key',
        path: `/v1/accounts/${odd}`,
        status: 200,
        bodyDigest: odd,
        response: sent[0]!.response,
        idempotencyKey: odd,
      });
      expect(Number(first!.durationMs)).toBe(12.345);
      // A record without a user is kept, but belongs to nobody's list.
      expect((await store.requests.list(u.id, { limit: 10 })).map((r) => r.id).sort()).toEqual([ids[0], ids[2]].sort());
      const third = await store.requests.byId(u.id, ids[2]!);
      expect(third).toMatchObject({
        status: 202,
        bodyDigest: 'NULL',
        response: 'NULL',
        idempotencyKey: '',
        durationMs: null,
      });
    });
  });
}
