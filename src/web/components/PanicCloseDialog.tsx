import { useEffect, useRef, useState } from 'react';
import { allPositions, app, http, must } from '../api/client';
import type { AccountPanicReport } from '../api/types';
import { num } from '../lib/format';
import { Alert } from './Alert';
import { Badge } from './Badge';
import { Modal } from './Modal';

type Scope =
  | { kind: 'account'; id: string; name: string }
  | { kind: 'group'; id: string; name: string; accounts: Array<{ id: string; name: string }> };
type Phase =
  | { step: 'confirm' }
  | { step: 'running'; open: number | null; startedAt: number; job?: string }
  | { step: 'done'; reports: AccountPanicReport[] }
  | { step: 'failed'; error: unknown };

/** A panic-close job as the job route reports it (the close route answers 202 with one when it outlasts its short wait). */
interface PanicJob {
  id: string;
  state: string;
  error?: string | null;
  totals?: { remaining?: number };
  progress?: { accounts?: AccountPanicReport[] } | null;
}
const FINAL = new Set(['succeeded', 'failed', 'done', 'completed', 'finished', 'cancelled']);
const jobReports = (j: PanicJob): AccountPanicReport[] => j.progress?.accounts ?? [];

async function openPositions(ids: string[]): Promise<number> {
  const counts = await Promise.all(ids.map(async (id) => (await allPositions(id)).length));
  return counts.reduce((a, b) => a + b, 0);
}

/**
 * Panic-close of an account or a copier group: a confirmation, then progress (open positions left, counted
 * from the brokers while the close runs) until flat, then the result per account and position.
 */
export function PanicCloseDialog({ scope, onClose }: { scope: Scope; onClose: () => void }) {
  const [phase, setPhase] = useState<Phase>({ step: 'confirm' });
  const alive = useRef(true);
  useEffect(
    () => () => {
      alive.current = false;
    },
    [],
  );
  const ids = scope.kind === 'account' ? [scope.id] : scope.accounts.map((a) => a.id);
  const names = new Map(
    scope.kind === 'account' ? [[scope.id, scope.name]] : scope.accounts.map((a) => [a.id, a.name]),
  );

  const run = async () => {
    const startedAt = Date.now();
    setPhase({ step: 'running', open: null, startedAt });
    let finished = false;
    // Progress: the number of open positions, read from the brokers while the close runs.
    const watch = (async () => {
      while (!finished && alive.current) {
        try {
          const open = await openPositions(ids);
          if (!finished && alive.current) setPhase((p) => (p.step === 'running' ? { ...p, open } : p));
        } catch {
          /* progress is a courtesy */
        }
        await new Promise((r) => setTimeout(r, 700));
      }
    })();
    try {
      const answer: unknown =
        scope.kind === 'account'
          ? await must(
              app.POST('/v1/accounts/{account_id}/panic-close', {
                params: { path: { account_id: scope.id } },
                body: {},
              }),
            )
          : await must(
              app.POST('/v1/copier-groups/{group_id}/panic-close', {
                params: { path: { group_id: scope.id } },
                body: {},
              }),
            );
      let reports = toReports(answer);
      const jobId = reports === null ? jobIdOf(answer) : null;
      if (jobId) {
        // Still running: follow the job until it ends (its totals are the progress).
        setPhase((p) => (p.step === 'running' ? { ...p, job: jobId } : p));
        for (;;) {
          const j = await http<PanicJob>('GET', `/app/v1/panic-close-jobs/${encodeURIComponent(jobId)}`);
          if (typeof j.totals?.remaining === 'number' && alive.current)
            setPhase((p) => (p.step === 'running' ? { ...p, open: j.totals!.remaining! } : p));
          if (FINAL.has(j.state)) {
            reports = jobReports(j);
            if (reports.length === 0 && j.error) throw new Error(j.error);
            break;
          }
          await new Promise((r) => setTimeout(r, 800));
        }
      }
      finished = true;
      await watch;
      if (alive.current) setPhase({ step: 'done', reports: reports ?? [] });
    } catch (error) {
      finished = true;
      if (alive.current) setPhase({ step: 'failed', error });
    }
  };

  const busy = phase.step === 'running';
  const what =
    scope.kind === 'account' ? (
      <>
        the account <strong>{scope.name}</strong> only (if it is a Master, its Slaves follow these closes as they follow
        any close)
      </>
    ) : (
      <>
        all {scope.accounts.length} account{scope.accounts.length === 1 ? '' : 's'} of group{' '}
        <strong>{scope.name}</strong>, its Master and its Slaves: {scope.accounts.map((a) => a.name).join(', ')}
      </>
    );
  const lock =
    scope.kind === 'account'
      ? 'The account is locked: nothing is copied to or from it until you resume it.'
      : 'Each of them is locked: nothing is copied in the group until you resume them ("Resume group").';
  return (
    <Modal title={`Panic close: ${scope.name}`} onClose={onClose} busy={busy}>
      {phase.step === 'confirm' && (
        <>
          <p data-testid="panic-scope">
            This closes <strong>all open trades</strong> of {what}, at market, and cancels their pending orders. {lock}
          </p>
          <p>It cannot be undone.</p>
          <div className="actions">
            <button type="button" className="btn" onClick={onClose} autoFocus>
              Cancel
            </button>
            <button type="button" className="btn btn-danger" onClick={() => void run()}>
              Close everything
            </button>
          </div>
        </>
      )}
      {phase.step === 'running' && (
        <div role="status" aria-live="polite">
          <progress aria-label="Closing positions" />
          <p>
            Closing positions{phase.job ? ` (job ${phase.job})` : ''}…{' '}
            {phase.open === null ? (
              ''
            ) : (
              <>
                <strong data-testid="panic-open">{phase.open}</strong> open position{phase.open === 1 ? '' : 's'} left.
              </>
            )}
          </p>
        </div>
      )}
      {phase.step === 'done' && (
        <PanicResult reports={phase.reports} names={names} onClose={onClose} onRetry={() => void run()} />
      )}
      {phase.step === 'failed' && (
        <>
          <Alert error={phase.error} title="Panic close failed" />
          <div className="actions">
            <button type="button" className="btn" onClick={onClose}>
              Close
            </button>
            <button type="button" className="btn btn-danger" onClick={() => void run()}>
              Try again
            </button>
          </div>
        </>
      )}
    </Modal>
  );
}

function toReports(answer: unknown): AccountPanicReport[] | null {
  if (!answer || typeof answer !== 'object') return null;
  const a = answer as { accounts?: AccountPanicReport[]; accountId?: string };
  if (Array.isArray(a.accounts)) return a.accounts;
  if (typeof a.accountId === 'string' && Array.isArray((a as AccountPanicReport).positions))
    return [a as AccountPanicReport];
  return null;
}
function jobIdOf(answer: unknown): string | null {
  const a = (answer ?? {}) as { jobId?: unknown; id?: unknown };
  return typeof a.jobId === 'string' ? a.jobId : typeof a.id === 'string' ? a.id : null;
}

function PanicResult({
  reports,
  names,
  onClose,
  onRetry,
}: {
  reports: AccountPanicReport[];
  names: Map<string, string>;
  onClose: () => void;
  onRetry: () => void;
}) {
  const remaining = reports.reduce((n, r) => n + r.remaining, 0);
  const closed = reports.reduce((n, r) => n + r.closed, 0);
  const failed = reports.reduce((n, r) => n + r.failed, 0);
  const cancelled = reports.reduce((n, r) => n + ((r as { cancelled?: number }).cancelled ?? 0), 0);
  return (
    <>
      <div className={`alert ${remaining === 0 ? 'alert-good' : 'alert-bad'}`} role="status" data-testid="panic-result">
        {remaining === 0 ? (
          <strong>Flat.</strong>
        ) : (
          <strong>
            Not flat: {remaining} position{remaining === 1 ? '' : 's'} still open.
          </strong>
        )}{' '}
        Closed {closed}, failed {failed}
        {cancelled ? `, ${cancelled} pending order${cancelled === 1 ? '' : 's'} cancelled` : ''}.
      </div>
      <div className="table-wrap">
        <table>
          <caption className="sr-only">Result per account</caption>
          <thead>
            <tr>
              <th>Account</th>
              <th>Closed</th>
              <th>Failed</th>
              <th>Open left</th>
              <th>Positions</th>
            </tr>
          </thead>
          <tbody>
            {reports.map((r) => (
              <tr key={r.accountId}>
                <td>
                  {names.get(r.accountId) ?? (
                    <span className="muted" title={r.accountId}>
                      an account no longer listed
                    </span>
                  )}
                  {r.error && <div className="bad small">{r.error}</div>}
                </td>
                <td>{r.closed}</td>
                <td>{r.failed}</td>
                <td>{r.remaining}</td>
                <td>
                  {r.positions.map((p) => (
                    <div key={p.positionId} className="small">
                      {p.symbol} {p.side} {num(Number(p.volume))} <Badge value={p.outcome} />
                      {p.closePrice ? ` @ ${p.closePrice}` : ''}
                      {p.error ? ` — ${p.error}` : ''}
                    </div>
                  ))}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <div className="actions">
        {remaining > 0 && (
          <button type="button" className="btn btn-danger" onClick={onRetry}>
            Close the rest
          </button>
        )}
        <button type="button" className="btn btn-primary" onClick={onClose} autoFocus>
          Done
        </button>
      </div>
    </>
  );
}
