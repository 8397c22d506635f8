/** One line of `copytrade doctor`: what was checked, how it went, and the setting that fixes it. */
export type CheckStatus = 'ok' | 'warn' | 'fail';

export interface CheckResult {
  status: CheckStatus;
  /** Stable name of the check (`platformc.credentials`, `store`, `clock`...), for scripts. */
  check: string;
  /** What was found, in words (the reason when it failed: DNS failure, refused, timeout, TLS). */
  detail: string;
  /** What to set or do (the setting or environment variable by name); null when nothing is to be done. */
  fix: string | null;
}

export const ok = (check: string, detail: string): CheckResult => ({ status: 'ok', check, detail, fix: null });
export const warn = (check: string, detail: string, fix: string): CheckResult => ({
  status: 'warn',
  check,
  detail,
  fix,
});
export const fail = (check: string, detail: string, fix: string): CheckResult => ({
  status: 'fail',
  check,
  detail,
  fix,
});

/** A Date header a host answered with, and when (by the doctor's clock) the answer arrived. */
export interface SeenDate {
  host: string;
  date: string;
  at: number;
}
