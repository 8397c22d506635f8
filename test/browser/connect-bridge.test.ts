import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedEa } from '../../src/simulator/ea/sim-ea.js';
import { freshUser, shot, signIn, startHarness, type Harness } from './harness.js';

/**
 * The "MetaTrader, self-hosted" wizard in the browser: the account and its token (shown once), the EA's URL and
 * what to allow-list, then green once a (simulated) EA dials in with what the page showed; the account's page
 * shows the EA's heartbeat.
 */
describe('connection wizard: MetaTrader through the terminal bridge', { timeout: 120_000 }, () => {
  let h: Harness;
  let ea: SimulatedEa | null = null;

  beforeAll(async () => {
    h = await startHarness();
  }, 120_000);
  afterAll(async () => {
    await ea?.stop();
    await h?.close();
  });

  it('creates the account, shows the token once with the URL and steps, and turns green on the EA hello', async () => {
    const user = await freshUser(h.svc, 'wizard-bridge');
    const group = await h.svc.store.accounts.createGroup(user.id, 'Bridge group');
    const sim = h.svc.broker.createAccount({
      login: '77123',
      balance: '4200',
      currency: 'USD',
      hedging: true,
      meta: { server: 'SimA-Home' },
    });

    const { page } = await h.newPage();
    await signIn(page, user.email, user.password);
    await page.getByRole('link', { name: 'Connect', exact: true }).click();
    await page.getByRole('link', { name: 'Connect a MetaTrader, self-hosted account' }).click();
    await page.getByRole('heading', { name: 'Connect a MetaTrader account, self-hosted' }).waitFor();
    await page.getByLabel('Broker server').fill('SimA-Home');
    await page.getByLabel('Login ID').fill('77123');
    await page.getByRole('button', { name: 'Create the account and its token' }).click();

    const token = (await page.getByTestId('bridge-token').textContent())!;
    const url = (await page.getByTestId('bridge-url').textContent())!;
    expect(token).toMatch(/^ctbt_/);
    expect(url).toBe(`${h.svc.baseUrl.replace('http', 'ws')}/bridge/v1/ws`);
    await expect(page.getByTestId('bridge-allow').textContent()).resolves.toBe(h.svc.baseUrl);
    await expect(page.locator('.install-steps').textContent()).resolves.toContain('ea/CopytradeBridge.mq5');
    await page.getByRole('status').filter({ hasText: "Waiting for the EA's hello" }).waitFor();
    await shot(page, 'connect-bridge');
    const [stored] = await h.svc.store.accounts.list(user.id);
    expect(stored).toMatchObject({ platform: 'platforma', brokerAccountNumber: '77123', groupId: null });

    // The user's terminal: an EA with exactly what the page showed.
    ea = new SimulatedEa({ broker: h.svc.broker, accountId: sim.id, url, token, manualHeartbeat: true });
    ea.start();
    await ea.whenWelcomed();
    ea.heartbeat();
    const done = page.getByTestId('bridge-connected');
    await done.waitFor();
    await expect(done.textContent()).resolves.toContain('said hello');
    // Shown once: gone from the page now that the EA has it.
    expect(await page.getByTestId('bridge-token').count()).toBe(0);

    // Reached through its EA, it goes in a copier group.
    await page.getByLabel(`Group of ${stored!.name}`).selectOption({ label: 'Bridge group' });
    await page.getByLabel(`Role of ${stored!.name}`).selectOption('slave');
    await page.getByRole('button', { name: 'Assign' }).click();
    await page.getByRole('listitem').filter({ hasText: 'Copier group' }).and(page.locator('.done')).waitFor();
    expect((await h.svc.store.accounts.byId(stored!.id))!.groupId).toBe(group.id);
    await shot(page, 'connect-bridge-connected');

    await done.getByRole('link', { name: 'Open the account' }).click();
    const beat = page.getByTestId('bridge-heartbeat');
    await beat.filter({ hasText: '4,200' }).waitFor();
    await expect(beat.textContent()).resolves.toMatch(/Terminal EAconnected/);
  });
});
