import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * Issue 10 §1: chained copying (a Slave of one group is the Master of another) is allowed only while the
 * graph of groups has no cycle; an assignment that closes one is refused with a 409 that names it. With one
 * connection per broker account the graph can only get an edge from a row that reaches a broker account
 * under another identity (written before migration 0004, or moved by hand): this builds such rows directly.
 */
let svc: TestService;
let token: string;
let userId: string;

beforeAll(async () => {
  svc = await startTestService();
  await svc.deps.auth.createUser('cycle@example.test', 'password-123');
  token = (await svc.call('POST', '/app/sign-in', { body: { email: 'cycle@example.test', password: 'password-123' } }))
    .body.accessToken;
  userId = (await svc.store.users.byEmail('cycle@example.test'))!.id;
});
afterAll(async () => svc?.close());

const group = async (name: string) =>
  (await svc.call('POST', '/app/v1/copier-groups', { token, body: { name } })).body.id as string;
/** A sim connection that reaches broker account `reaches`, whatever identity it was stored under. */
async function account(name: string, reaches: string): Promise<string> {
  const a = await svc.store.accounts.create({
    userId,
    platform: 'sim',
    role: 'slave',
    name,
    brokerAccountId: `${name}-own`,
    brokerAccountNumber: '1',
  });
  await svc.store.database.db.execute(sql`update accounts set broker_account_id = ${reaches} where id = ${a.id}`);
  await svc.store.accounts.setStatus(a.id, 'connected');
  return a.id;
}
const assign = (id: string, groupId: string | null, role: 'master' | 'slave') =>
  svc.call('PUT', `/app/v1/accounts/${id}/assignment`, { token, body: { groupId, role } });

describe('assignment: no copy cycles', () => {
  it("a Slave that is the same broker account as its group's Master is refused", async () => {
    const g = await group('self');
    expect((await assign(await account('m-self', 'acct-x'), g, 'master')).status).toBe(200);
    const echo = await assign(await account('s-self', 'acct-x'), g, 'slave');
    expect(echo.status).toBe(409);
    expect(echo.body).toMatchObject({ code: 'copy_cycle', cycle: [g, g] });
    expect(echo.body.error).toContain(`${g} -> ${g}`);
  });

  it('a chain of groups is allowed; the assignment that closes it into a cycle is refused, naming it', async () => {
    const g1 = await group('g1');
    const g2 = await group('g2');
    expect((await assign(await account('m1', 'acct-a'), g1, 'master')).status).toBe(200);
    expect((await assign(await account('s1', 'acct-b'), g1, 'slave')).status).toBe(200);
    // G2's Master is the broker account G1 copies to: a chain G1 -> G2.
    expect((await assign(await account('m2', 'acct-b'), g2, 'master')).status).toBe(200);
    const other = await account('s2-other', 'acct-c');
    expect((await assign(other, g2, 'slave')).status).toBe(200);
    // A Slave of G2 that is G1's Master would copy back into G1.
    const back = await assign(await account('s2-back', 'acct-a'), g2, 'slave');
    expect(back.status).toBe(409);
    expect(back.body).toMatchObject({ code: 'copy_cycle', cycle: [g2, g1, g2] });
  });

  it('a disabled duplicate connection cannot be assigned or resumed', async () => {
    const g = await group('dup');
    const id = await account('dup', 'acct-d');
    await svc.store.accounts.setStatus(
      id,
      'disabled',
      'duplicate connection: this broker account is already connected as acc_x',
    );
    const r = await assign(id, g, 'slave');
    expect(r.status).toBe(409);
    expect(r.body.code).toBe('account_already_connected');
    const resume = await svc.call('POST', `/app/v1/accounts/${id}/resume`, { token });
    expect(resume.status).toBe(409);
    expect((await svc.store.accounts.byId(id))!.status).toBe('disabled');
  });
});
