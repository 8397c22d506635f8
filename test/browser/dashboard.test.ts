import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { shot, signIn, startHarness, type Harness } from './harness.js';

/**
 * The dashboard in Debian's Chromium against the service in demo mode: sign in, API keys, an order copied to
 * the Slaves as the ledger shows it, panic close of the group to flat. Screenshots of the main pages.
 */
describe('web dashboard', { timeout: 90_000 }, () => {
  let h: Harness;
  let page: Page;

  beforeAll(async () => {
    h = await startHarness();
    ({ page } = await h.newPage());
  }, 120_000);
  afterAll(async () => {
    await h?.close();
  });

  it('serves the dashboard at the root and keeps the API paths', async () => {
    const index = await fetch(`${h.svc.baseUrl}/trades`, { headers: { accept: 'text/html' } });
    expect(index.status).toBe(200);
    expect(await index.text()).toContain('<div id="root">');
    const api = await fetch(`${h.svc.baseUrl}/api/nope`, { headers: { accept: 'text/html' } });
    expect(api.status).toBe(404);
    expect((await api.json()).code).toBe('not_found');
    expect((await fetch(`${h.svc.baseUrl}/healthz`)).status).toBe(200);
  });

  it('signs in, and a wrong password says so', async () => {
    await page.goto('/');
    await shot(page, 'sign-in');
    await page.getByLabel('Email').fill(h.svc.demo!.email);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('Wrong email or password');
    await signIn(page, h.svc.demo!.email, h.svc.demo!.password);
    const token = await page.evaluate(() => sessionStorage.getItem('copytrade.session'));
    expect(JSON.parse(token!).accessToken).toMatch(/^ctat_/);
    await page.getByRole('heading', { name: 'Accounts' }).waitFor();
    const rows = page.getByTestId('accounts-table').locator('tbody tr');
    await expect.poll(() => rows.count()).toBeGreaterThanOrEqual(5);
    await expect(page.getByTestId('accounts-table').textContent()).resolves.toContain('Demo Master');
  });

  it('creates an API key (shown once), rotates it, and the new key works on /v1/accounts', async () => {
    await page.getByRole('link', { name: 'Developer' }).click();
    await page.getByLabel('Key name').fill('browser test');
    await page.getByRole('button', { name: 'Create key' }).click();
    const first = (await page.getByTestId('new-key-value').textContent())!.trim();
    expect(first).toMatch(/^ctk_/);
    const r1 = await fetch(`${h.svc.v1BaseUrl}/v1/accounts`, { headers: { authorization: `Bearer ${first}` } });
    expect(r1.status).toBe(200);

    await page.getByRole('button', { name: 'Rotate browser test' }).click();
    await page.getByTestId('new-key').filter({ hasText: 'Replaces browser test' }).waitFor();
    const second = (await page.getByTestId('new-key-value').textContent())!.trim();
    expect(second).toMatch(/^ctk_/);
    expect(second).not.toBe(first);
    const r2 = await fetch(`${h.svc.v1BaseUrl}/v1/accounts`, { headers: { authorization: `Bearer ${second}` } });
    expect(r2.status).toBe(200);
    const body = (await r2.json()) as { accounts: Array<{ role: string }> };
    expect(body.accounts.some((a) => a.role === 'master')).toBe(true);
    // The table is read again after the rotation answers: the new key shows first, the old one's state after.
    await expect.poll(() => page.getByTestId('keys-table').textContent(), { timeout: 15_000 }).toContain('expiring');
    await shot(page, 'developer');
  });

  it('sends an order to the Master and watches every Slave fill in the ledger', async () => {
    await page.getByRole('link', { name: 'Trades' }).click();
    await page.getByRole('heading', { name: 'Trades and copy ledger' }).waitFor();
    const form = page.getByRole('form', { name: 'Send an order' });
    await form.getByLabel('Symbol').fill('EURUSD');
    await form.getByLabel('Volume (lots)').fill('0.1');
    await form.getByRole('button', { name: /Buy 0.1 EURUSD/ }).click();
    const result = page.getByTestId('order-result');
    await result.waitFor();
    const text = (await result.textContent())!;
    const tradeId = /trd_[a-z0-9]+/.exec(text)![0];
    const copiedTo = Number(/copied to (\d+)/.exec(text)![1]);
    expect(copiedTo).toBeGreaterThanOrEqual(4);

    // The trade's ledger is open; every copy ends confirmed (the poll or the event stream refreshes it).
    const ledger = page.locator(`#copies-${tradeId}`).getByTestId('ledger');
    await ledger.waitFor();
    await expect
      .poll(async () => ledger.locator('tbody tr[data-outcome="confirmed"]').count(), { timeout: 45_000 })
      .toBe(copiedTo);
    await expect(ledger.locator('tbody tr').count()).resolves.toBe(copiedTo);
    await shot(page, 'trades');

    // The Master's page shows the position.
    await page.getByRole('link', { name: 'Accounts' }).click();
    await page.getByRole('link', { name: 'Demo Master' }).click();
    await expect.poll(() => page.getByTestId('positions-table').locator('tbody tr').count()).toBeGreaterThanOrEqual(1);
    await shot(page, 'account');
  });

  it('panic-closes the copier group until it is flat', async () => {
    await page.getByRole('link', { name: 'Copier groups' }).click();
    const card = page.getByTestId('group-card').filter({ hasText: 'Demo group' });
    await card.waitFor();
    await card.getByRole('button', { name: 'Edit rule' }).first().click();
    await card.getByRole('form', { name: 'Copy rule' }).waitFor();
    await shot(page, 'groups');
    await card.getByRole('button', { name: 'Panic close group…' }).click();
    const dialog = page.getByRole('dialog', { name: /Panic close: Demo group/ });
    await dialog.waitFor();
    await shot(page, 'panic-confirm', { fullPage: false });
    await dialog.getByRole('button', { name: 'Close everything' }).click();
    const result = dialog.getByTestId('panic-result');
    await result.waitFor({ timeout: 60_000 });
    await expect(result.textContent()).resolves.toContain('Flat.');
    await shot(page, 'panic-result', { fullPage: false });
    await dialog.getByRole('button', { name: 'Done' }).click();

    // Every account of the group is flat at its broker.
    const token = JSON.parse((await page.evaluate(() => sessionStorage.getItem('copytrade.session')))!)
      .accessToken as string;
    const auth = { authorization: `Bearer ${token}` };
    const { accounts } = (await (await fetch(`${h.svc.baseUrl}/app/v1/accounts`, { headers: auth })).json()) as {
      accounts: Array<{ id: string; groupId: string | null }>;
    };
    for (const a of accounts.filter((x) => x.groupId)) {
      const { positions } = (await (
        await fetch(`${h.svc.baseUrl}/app/v1/accounts/${a.id}/positions`, { headers: auth })
      ).json()) as { positions: unknown[] };
      expect(positions, a.id).toHaveLength(0);
    }
  });

  it('shows the equity and latency charts, and signs out', async () => {
    await page.getByRole('link', { name: 'Accounts' }).click();
    await page.getByRole('img', { name: /Equity over time/ }).waitFor();
    await shot(page, 'accounts');
    await page.getByRole('link', { name: 'Trades' }).click();
    await page.getByRole('img', { name: /Copy latency per trade/ }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('copytrade.session'))).toBeNull();
  });
});
