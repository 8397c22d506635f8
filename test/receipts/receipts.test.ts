import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runAdminOp } from '../../src/admin/ops.js';
import { ReceiptSealer } from '../../src/receipts/sealer.js';
import { rowsOf } from '../../src/store/rows-of.js';
import { startTestService, type TestService } from '../helpers/service.js';

let svc: TestService;
let key: string;
const exec = async <T>(q: ReturnType<typeof sql>) => rowsOf<T>(await svc.store.database.db.execute(q));

interface Verdict {
  accountId: string;
  receipts: number;
  fault: { receiptId: string | null; seq: number; problem: string } | null;
}
const verify = async (account?: string) =>
  (await runAdminOp({ store: svc.store, auth: svc.deps.auth }, 'receipts.verify', {
    ...(account ? { account } : {}),
    publicKeys: [svc.deps.receiptKey!.current.pem],
  })) as { ok: boolean; accounts: Verdict[] };

/** The account with the most receipts, and its receipt #2. */
let account: string;
let second: {
  id: string;
  intent_id: string;
  body: string;
  hash: string;
  prev_hash: string;
  day: string;
  user_id: string;
};

beforeAll(async () => {
  svc = await startTestService();
  key = svc.demo!.apiKey;
  const accounts = (await svc.call('GET', '/v1/accounts', { token: key })).body.accounts as Array<{
    id: string;
    role: string;
    platform: string;
  }>;
  const master = accounts.find((a) => a.role === 'master' && a.platform === 'sim')!;
  // A day of trading in small: opens of both sides, then the Master's positions closed.
  for (const [side, volume] of [
    ['buy', 0.1],
    ['sell', 0.2],
    ['buy', 0.3],
  ] as const) {
    const r = await svc.call('POST', `/v1/accounts/${master.id}/orders`, {
      token: key,
      body: { symbol: 'EURUSD', side, volume },
    });
    expect(r.status).toBe(202);
  }
  await vi.waitFor(
    async () => {
      const [n] = await exec<{ ended: number; open: number }>(
        sql`select count(*) filter (where state in ('confirmed','rejected','denied','skipped'))::int as ended,
                   count(*) filter (where state not in ('confirmed','rejected','denied','skipped'))::int as open
            from copy_intents`,
      );
      if (!n || n.ended < 3 || n.open > 0) throw new Error(`ledger not ended yet: ${JSON.stringify(n)}`);
    },
    { timeout: 20_000, interval: 50 },
  );
  const sealed = await svc.sealer.runOnce(0);
  expect(sealed).toBeGreaterThan(0);
  const [top] = await exec<{ account_id: string }>(
    sql`select account_id from receipts group by account_id order by count(*) desc, account_id limit 1`,
  );
  account = top!.account_id;
  const rows = await exec<typeof second>(sql`select * from receipts where account_id = ${account} and seq = 2`);
  expect(rows).toHaveLength(1);
  second = rows[0]!;
}, 60_000);
afterAll(async () => svc?.close());

describe('receipts on the demo', () => {
  it('seal every ended row once, with the sizing inputs, and verify', async () => {
    expect(await svc.sealer.runOnce(0)).toBe(0);
    const [c] = await exec<{ rows: number; receipts: number }>(
      sql`select (select count(*)::int from copy_intents) as rows, (select count(*)::int from receipts) as receipts`,
    );
    expect(c!.receipts).toBe(c!.rows);
    const sized = await exec<{ body: string }>(sql`select body from receipts where body like '%"sizing":{%' limit 1`);
    expect(JSON.parse(sized[0]!.body).sizing).toMatchObject({ rule: { sizing: { mode: expect.any(String) } } });
    const v = await verify();
    expect(v.accounts.length).toBeGreaterThan(0);
    expect(v.accounts.filter((a) => a.fault)).toEqual([]);
    expect(v.ok).toBe(true);
  });

  it('two sealers at once append each row once, on one unforked chain', async () => {
    const accounts = (await svc.call('GET', '/v1/accounts', { token: key })).body.accounts as Array<{
      id: string;
      role: string;
      platform: string;
    }>;
    const master = accounts.find((a) => a.role === 'master' && a.platform === 'sim')!;
    const before = (await exec<{ n: number }>(sql`select count(*)::int as n from copy_intents`))[0]!.n;
    expect(
      (
        await svc.call('POST', `/v1/accounts/${master.id}/orders`, {
          token: key,
          body: { symbol: 'EURUSD', side: 'buy', volume: 0.4 },
        })
      ).status,
    ).toBe(202);
    await vi.waitFor(
      async () => {
        const [n] = await exec<{ all: number; open: number }>(
          sql`select count(*)::int as all, count(*) filter (where state not in ('confirmed','rejected','denied','skipped'))::int as open from copy_intents`,
        );
        if (n!.all <= before || n!.open > 0) throw new Error('copies not ended yet');
      },
      { timeout: 20_000, interval: 50 },
    );
    const other = new ReceiptSealer(svc.store.receipts, svc.deps.receiptKey!, { everyMs: 60_000, graceMs: 0 });
    const [a, b] = await Promise.all([svc.sealer.runOnce(0), other.runOnce(0)]);
    expect(a + b).toBeGreaterThan(0);
    const [c] = await exec<{ rows: number; receipts: number; dup: number }>(
      sql`select (select count(*)::int from copy_intents) as rows, (select count(*)::int from receipts) as receipts,
                 (select count(*)::int from (select account_id, seq from receipts group by 1, 2 having count(*) > 1) d) as dup`,
    );
    expect(c).toEqual({ rows: c!.receipts, receipts: c!.receipts, dup: 0 });
    expect((await verify()).ok).toBe(true);
  });

  it('serve a receipt, a page, a day head and the public key; another user gets the unknown id 404', async () => {
    const doc = (await svc.call('GET', '/openapi.json')).body;
    for (const path of [
      '/v1/receipts/{receipt_id}',
      '/v1/accounts/{account_id}/receipts',
      '/v1/accounts/{account_id}/receipt-heads/{day}',
      '/v1/receipt-key',
    ])
      expect(doc.paths[path]?.get?.['x-open-point'], path).toBe(true);
    const one = await svc.call('GET', `/v1/receipts/${second.id}`, { token: key });
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ receiptId: second.id, seq: 2, hash: second.hash, body: second.body });
    const page = await svc.call('GET', `/v1/accounts/${account}/receipts?limit=1`, { token: key });
    expect(page.body.receipts).toHaveLength(1);
    const next = await svc.call('GET', `/v1/accounts/${account}/receipts?limit=1&cursor=${page.body.nextCursor}`, {
      token: key,
    });
    expect(next.body.receipts[0].seq).toBe(2);
    const head = await svc.call('GET', `/v1/accounts/${account}/receipt-heads/${second.day}`, { token: key });
    expect(head.status).toBe(200);
    const pub = await svc.call('GET', '/v1/receipt-key', { token: key });
    expect(pub.body).toMatchObject({ algorithm: 'Ed25519', keyId: head.body.keyId });
    const { createPublicKey, verify: edVerify } = await import('node:crypto');
    expect(
      edVerify(
        null,
        Buffer.from(head.body.message),
        createPublicKey(pub.body.publicKeyPem),
        Buffer.from(head.body.signature, 'base64'),
      ),
    ).toBe(true);

    await svc.deps.auth.createUser('mallory@example.test', 'mallory password 1234');
    const token = (
      await svc.call('POST', '/app/sign-in', {
        body: { email: 'mallory@example.test', password: 'mallory password 1234' },
      })
    ).body.accessToken as string;
    const otherKey = (await svc.call('POST', '/app/api-keys', { token, body: { name: 'm' } })).body.apiKey as string;
    const foreign = await svc.call('GET', `/v1/receipts/${second.id}`, { token: otherKey });
    const unknown = await svc.call('GET', '/v1/receipts/rcp_00000000000000000000000000000000', { token: otherKey });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error).toBe(unknown.body.error);
    expect(
      (await svc.call('GET', `/v1/accounts/${account}/receipt-heads/${second.day}`, { token: otherKey })).status,
    ).toBe(404);
  });

  /** One edit in the store, verify names receipt #2 of the account, the edit is undone, verify passes again. */
  type Q = ReturnType<typeof sql>;
  const run = async (qs: Q | Q[]) => {
    for (const q of Array.isArray(qs) ? qs : [qs]) await svc.store.database.db.execute(q);
  };
  async function failsAtSecond(edit: Q | Q[], undo: Q | Q[], problem: RegExp) {
    await run(edit);
    try {
      const v = await verify(account);
      expect(v.ok).toBe(false);
      expect(v.accounts[0]!.fault).toMatchObject({ seq: 2, problem: expect.stringMatching(problem) });
      return v.accounts[0]!.fault!;
    } finally {
      await run(undo);
      expect((await verify(account)).ok).toBe(true);
    }
  }

  it("fails naming the receipt after an edit of its ledger row's volume or time", async () => {
    const [row] = await exec<{ planned_volume: string | null; updated_at: Date }>(
      sql`select planned_volume, updated_at from copy_intents where id = ${second.intent_id}`,
    );
    const f = await failsAtSecond(
      sql`update copy_intents set planned_volume = coalesce(planned_volume, 0) + 0.01 where id = ${second.intent_id}`,
      sql`update copy_intents set planned_volume = ${row!.planned_volume} where id = ${second.intent_id}`,
      /request.plannedVolume differs/,
    );
    expect(f.receiptId).toBe(second.id);
    await failsAtSecond(
      sql`update copy_intents set updated_at = updated_at + interval '1 second' where id = ${second.intent_id}`,
      sql`update copy_intents set updated_at = ${row!.updated_at} where id = ${second.intent_id}`,
      /answer.endedAt differs/,
    );
  });

  it('fails naming the receipt after an edited byte of the receipt itself, or of its signed head', async () => {
    const [head] = await exec<{ hash: string; seq: number }>(
      sql`select hash, seq from receipt_heads where account_id = ${account} and day = ${second.day}`,
    );
    await run(
      sql`update receipt_heads set hash = ${second.hash} where account_id = ${account} and day = ${second.day}`,
    );
    try {
      const v = await verify(account);
      expect(v.accounts[0]!.fault).toMatchObject({ seq: head!.seq, problem: expect.stringMatching(/signature/) });
    } finally {
      await run(
        sql`update receipt_heads set hash = ${head!.hash} where account_id = ${account} and day = ${second.day}`,
      );
    }
    const edited = second.body.replace(`"seq":2`, `"seq":2 `);
    await failsAtSecond(
      sql`update receipts set body = ${edited} where id = ${second.id}`,
      sql`update receipts set body = ${second.body} where id = ${second.id}`,
      /edited/,
    );
  });

  it('fails naming the place of a deleted receipt, and of a deleted ledger row', async () => {
    const r = second;
    await failsAtSecond(
      sql`delete from receipts where id = ${r.id}`,
      sql`insert into receipts (id, account_id, user_id, seq, intent_id, day, prev_hash, hash, body)
          values (${r.id}, ${account}, ${r.user_id}, 2, ${r.intent_id}, ${r.day}, ${r.prev_hash}, ${r.hash}, ${r.body})`,
      /#2 is missing/,
    );
    await run(sql`create temp table if not exists receipts_trash (like copy_intents)`);
    await failsAtSecond(
      sql`with d as (delete from copy_intents where id = ${r.intent_id} returning *) insert into receipts_trash select * from d`,
      sql`with d as (delete from receipts_trash returning *) insert into copy_intents select * from d`,
      /gone from the store/,
    );
  });

  it('fails naming an inserted receipt', async () => {
    const r = second;
    const [max] = await exec<{ n: number }>(sql`select max(seq)::int as n from receipts where account_id = ${account}`);
    await failsAtSecond(
      [
        sql`update receipts set seq = seq + 1000 where account_id = ${account} and seq >= 2`,
        sql`update receipts set seq = seq - 999 where account_id = ${account} and seq >= 1002`,
        sql`insert into receipts (id, account_id, user_id, seq, intent_id, day, prev_hash, hash, body)
            values ('rcp_forged', ${account}, ${r.user_id}, 2, 'int_forged', ${r.day}, ${r.prev_hash}, ${r.hash}, ${r.body})`,
      ],
      [
        sql`delete from receipts where id = 'rcp_forged'`,
        sql`update receipts set seq = seq + 1000 where account_id = ${account} and seq >= 3`,
        sql`update receipts set seq = seq - 1001 where account_id = ${account} and seq >= 1003`,
      ],
      /gone from the store/,
    );
    expect(max!.n).toBeGreaterThanOrEqual(2);
  });
});
