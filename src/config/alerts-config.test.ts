import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadAlertsConfig } from './alerts-config.js';

describe('alerts settings', () => {
  it('has no SMTP server unless the operator sets one, and sensible timing', () => {
    const c = loadAlertsConfig({});
    expect(c.smtp).toBeNull();
    expect(c.telegramApiUrl).toBeNull();
    expect(c).toMatchObject({
      windowMs: 60_000,
      gatherMs: 5_000,
      retryScheduleMs: [30_000, 120_000, 600_000, 1_800_000],
    });
  });

  it('reads the SMTP password from its file (one trailing newline dropped) and needs a sender', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'ct-smtp-')), 'pw');
    writeFileSync(file, 'p@ss word\n');
    const c = loadAlertsConfig({
      COPYTRADE_SMTP_HOST: 'smtp.example.com',
      COPYTRADE_SMTP_PORT: '465',
      COPYTRADE_SMTP_USER: 'u',
      COPYTRADE_SMTP_PASSWORD_FILE: file,
      COPYTRADE_SMTP_FROM: 'a@example.com',
    });
    expect(c.smtp).toEqual({
      host: 'smtp.example.com',
      port: 465,
      secure: true,
      user: 'u',
      password: 'p@ss word',
      from: 'a@example.com',
    });
    expect(() => loadAlertsConfig({ COPYTRADE_SMTP_HOST: 'smtp.example.com' })).toThrow(/COPYTRADE_SMTP_FROM/);
    expect(() =>
      loadAlertsConfig({
        COPYTRADE_SMTP_HOST: 'h',
        COPYTRADE_SMTP_FROM: 'a@b.c',
        COPYTRADE_SMTP_PASSWORD_FILE: '/nope',
      }),
    ).toThrow(/COPYTRADE_SMTP_PASSWORD_FILE cannot be read/);
    expect(() =>
      loadAlertsConfig({ COPYTRADE_SMTP_HOST: 'h', COPYTRADE_SMTP_FROM: 'a@b.c', COPYTRADE_SMTP_PORT: 'x' }),
    ).toThrow(/COPYTRADE_SMTP_PORT/);
  });
});
