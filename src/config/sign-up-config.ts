import type { AlertsConfig } from './alerts-config.js';

/** Self-service sign-up (docs/people.md): off unless the operator turns it on. */
export interface SignUpConfig {
  enabled: boolean;
  /** The dashboard's public address: the verification link in the email starts with it. */
  publicUrl: string | null;
  /** How long a verification link works. */
  verifyTtlMs: number;
}

const ON = new Set(['1', 'true', 'on', 'yes']);

/**
 * COPYTRADE_SIGN_UP=on turns it on; it then needs COPYTRADE_PUBLIC_URL (where the link in the email points) and
 * the alerts' SMTP server (COPYTRADE_SMTP_HOST, docs/alerts.md), which sends the verification emails.
 */
export function loadSignUpConfig(env: NodeJS.ProcessEnv, alerts: AlertsConfig): SignUpConfig {
  const enabled = ON.has((env.COPYTRADE_SIGN_UP ?? '').trim().toLowerCase());
  const raw = env.COPYTRADE_PUBLIC_URL?.trim() || null;
  let publicUrl: string | null = null;
  if (raw) {
    try {
      publicUrl = new URL(raw).toString().replace(/\/$/, '');
    } catch {
      throw new Error(
        `COPYTRADE_PUBLIC_URL must be a URL such as https://copy.example.com, got ${JSON.stringify(raw)}`,
      );
    }
  }
  if (enabled && !publicUrl)
    throw new Error('COPYTRADE_SIGN_UP=on needs COPYTRADE_PUBLIC_URL: the verification email links to the dashboard');
  if (enabled && !alerts.smtp)
    throw new Error(
      'COPYTRADE_SIGN_UP=on needs an SMTP server (COPYTRADE_SMTP_HOST): it sends the verification emails',
    );
  return { enabled, publicUrl, verifyTtlMs: 24 * 3_600_000 };
}
