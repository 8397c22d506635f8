import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { totpCode } from '../../src/auth/totp.js';
import { axeViolations } from './a11y.js';
import { freshUser, shot, signIn, startHarness, type Harness } from './harness.js';

/**
 * The Security page and the account's Sharing section (docs/people.md): enrol an authenticator app with the secret
 * the page shows, get the recovery codes once, sign in again with a code, turn the factor off with a recovery code;
 * share an account read-only by email.
 */
describe('security and sharing pages', { timeout: 120_000 }, () => {
  let h: Harness;
  let page: Page;

  beforeAll(async () => {
    h = await startHarness();
    ({ page } = await h.newPage());
  }, 120_000);
  afterAll(async () => {
    await h?.close();
  });

  it('enrols TOTP, signs in with a code, and turns it off with a recovery code', async () => {
    const u = await freshUser(h.svc, 'totp');
    await signIn(page, u.email, u.password);
    await page.getByRole('link', { name: 'Security' }).click();
    await page.getByRole('heading', { name: 'Security', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
    const secret = (await page.getByTestId('totp-secret').textContent())!;
    await page.getByLabel('Code from the app').fill(totpCode(secret, Date.now()));
    await page.getByRole('button', { name: 'Turn on' }).click();
    const codes = page.getByRole('list', { name: 'Recovery codes' });
    await codes.waitFor();
    const recovery = (await codes.getByRole('listitem').allTextContents()).map((c) => c.trim());
    expect(recovery).toHaveLength(10);
    await expect.poll(() => page.getByTestId('second-factor-status').textContent()).toContain('On. 10 recovery');
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, 'security-totp-on');

    // Signed out, the password alone is not enough: the code step follows.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Email').fill(u.email);
    await page.getByLabel('Password').fill(u.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Second factor' }).waitFor();
    await page.getByLabel('Code').fill(recovery[0]!);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId('who').filter({ hasText: u.email }).waitFor();

    await page.getByRole('link', { name: 'Security' }).click();
    await page.getByLabel('A code from the app, or a recovery code').fill(recovery[1]!);
    await page.getByRole('button', { name: 'Turn off' }).click();
    await expect.poll(() => page.getByTestId('second-factor-status').textContent()).toContain('Off');
  });

  it('shares an account read-only by email from its page', async () => {
    const viewer = await freshUser(h.svc, 'viewer');
    ({ page } = await h.newPage());
    await signIn(page, h.svc.demo!.email, h.svc.demo!.password);
    const account = (await h.svc.store.accounts.all()).find((a) => a.platform === 'sim' && a.role === 'slave')!;
    await page.goto(`/accounts/${account.id}`);
    const section = page.getByRole('region', { name: 'Sharing' });
    await section.getByLabel('Email of the person').fill(viewer.email);
    await section.getByRole('button', { name: 'Share' }).click();
    const list = section.getByRole('list', { name: 'People with a role on this account' });
    await expect.poll(() => list.textContent()).toContain(`${viewer.email}: Read-only`);
    expect((await h.svc.store.grants.ofResource('account', account.id)).map((g) => g.role)).toEqual(['read_only']);
  });
});
