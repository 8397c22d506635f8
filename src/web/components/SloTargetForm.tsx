import { useEffect, useState, type FormEvent } from 'react';
import { setGroupSlo, type GroupSlo } from '../api/slo';
import { GRADES, targetBody, targetFields, type Target, type TargetFields } from '../lib/slo';
import { Alert } from './Alert';

const NUMBERS: Array<{ key: keyof TargetFields; label: string; hint: string }> = [
  { key: 'latencyP99Ms', label: 'Latency p99 at most (ms)', hint: 'not watched' },
  { key: 'latencyP50Ms', label: 'Latency p50 at most (ms)', hint: 'not watched' },
  { key: 'successPercent', label: 'Success at least (%)', hint: 'not watched' },
  { key: 'maxSlippagePoints', label: 'Mean slippage at most (points)', hint: 'not watched' },
  { key: 'windowMinutes', label: 'Window (minutes)', hint: '60' },
];

/**
 * A copier group's service-level target. Empty = not watched. The fields are plain text on purpose: the server
 * checks them and its 400 names the field (docs/slo.md), which the form shows as it is.
 */
export function SloTargetForm({
  groupId,
  target,
  onSaved,
}: {
  groupId: string;
  target: Target | null;
  /** Shows the new view; "Saved." appears once it has (the levels on screen are judged on the new target). */
  onSaved: (view: GroupSlo) => Promise<void>;
}) {
  const [f, setF] = useState<TargetFields>(() => targetFields(target));
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);
  // The stored target arrives or changes: show it. Compared as JSON: the live reloads bring an equal target in a
  // new object every few seconds, which must not wipe what the user is typing.
  const stored = JSON.stringify(target);
  useEffect(() => {
    setF(targetFields(JSON.parse(stored) as Target | null));
  }, [stored]);
  const set = (k: keyof TargetFields, v: string) => {
    setSaved(false);
    setF((x) => ({ ...x, [k]: v }));
  };
  const save = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    setBusy(true);
    try {
      const view = await setGroupSlo(groupId, targetBody(f, target?.minCopies));
      await onSaved(view);
      setSaved(true);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form className="risk-form" onSubmit={(e) => void save(e)} aria-label="Service-level target">
      <Alert error={error} title="The target was not saved" />
      <div className="form-grid">
        {NUMBERS.map((n) => (
          <label key={n.key}>
            {n.label}
            <input
              inputMode="decimal"
              value={f[n.key]}
              onChange={(e) => set(n.key, e.target.value)}
              placeholder={n.hint}
            />
          </label>
        ))}
        <label>
          Worst drift grade allowed
          <select value={f.maxDriftGrade} onChange={(e) => set('maxDriftGrade', e.target.value)}>
            <option value="">not watched</option>
            {GRADES.slice(0, 3).map((g) => (
              <option key={g} value={g}>
                {g}
              </option>
            ))}
          </select>
        </label>
      </div>
      <div className="actions">
        <button type="submit" className="btn btn-primary" disabled={busy}>
          Save target
        </button>
        {saved && (
          <span role="status" className="good small">
            Saved.
          </span>
        )}
      </div>
    </form>
  );
}
