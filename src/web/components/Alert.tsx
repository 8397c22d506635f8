import { describeError } from '../api/errors';
import { ApiError } from '../api/errors';

/** An error for a person: the server's message, its reasons when it lists them, and the request id. */
export function Alert({ error, title }: { error: unknown; title?: string }) {
  if (!error) return null;
  const problems = error instanceof ApiError ? error.problems : [];
  return (
    <div className="alert alert-bad" role="alert">
      {title && <strong>{title}: </strong>}
      {describeError(error)}
      {problems.length > 0 && (
        <ul>
          {problems.map((p) => (
            <li key={p}>{p}</li>
          ))}
        </ul>
      )}
      {error instanceof ApiError && error.requestId && <div className="muted small">request {error.requestId}</div>}
    </div>
  );
}

export function Notice({ children, tone = 'info' }: { children: React.ReactNode; tone?: 'info' | 'good' | 'warn' }) {
  return (
    <div className={`alert alert-${tone}`} role="status">
      {children}
    </div>
  );
}
