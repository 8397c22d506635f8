import { useEffect, useState, type FormEvent } from 'react';
import { getRiskLimits, setRiskLimits, type RiskLimits } from '../api/actions';
import { useQuery } from '../hooks/useQuery';
import { Alert, Notice } from './Alert';

type Fields = {
  maxDrawdownPercent: string;
  dailyLossLimit: string;
  maxOpenVolume: string;
  onBreach: 'pause' | 'close_and_pause';
  dayResetHourUtc: string;
  requireStopLoss: boolean;
};
const toFields = (l: RiskLimits | undefined): Fields => ({
  maxDrawdownPercent: l?.maxDrawdownPercent ?? '',
  dailyLossLimit: l?.dailyLossLimit ?? '',
  maxOpenVolume: l?.maxOpenVolume ?? '',
  onBreach: l?.onBreach ?? 'pause',
  dayResetHourUtc: l?.dayResetHourUtc === null || l?.dayResetHourUtc === undefined ? '' : String(l.dayResetHourUtc),
  requireStopLoss: l?.requireStopLoss ?? false,
});
const dec = (s: string) => (s.trim() === '' ? null : s.trim());

/** Risk limits of an account or of a group (applied to each of its Slaves); empty = no limit. */
export function RiskLimitsForm({
  scope,
  id,
  currency,
}: {
  scope: 'accounts' | 'copier-groups';
  id: string;
  currency?: string | null;
}) {
  const current = useQuery(() => getRiskLimits(scope, id), [scope, id]);
  const [f, setF] = useState<Fields>(toFields(undefined));
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState(false);
  useEffect(() => {
    if (current.data) setF(toFields(current.data.limits));
  }, [current.data]);
  const set = <K extends keyof Fields>(k: K, v: Fields[K]) => {
    setSaved(false);
    setF((x) => ({ ...x, [k]: v }));
  };
  const save = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    try {
      await setRiskLimits(scope, id, {
        maxDrawdownPercent: dec(f.maxDrawdownPercent),
        dailyLossLimit: dec(f.dailyLossLimit),
        maxOpenVolume: dec(f.maxOpenVolume),
        onBreach: f.onBreach,
        dayResetHourUtc: f.dayResetHourUtc === '' ? null : Number(f.dayResetHourUtc),
        requireStopLoss: f.requireStopLoss,
      });
      setSaved(true);
      await current.reload();
    } catch (err) {
      setError(err);
    }
  };
  const breach = current.data?.state?.lastBreach;
  return (
    <form className="risk-form" onSubmit={(e) => void save(e)} aria-label="Risk limits">
      <Alert error={current.error ?? error} />
      {breach && (
        <Notice tone="warn">
          Last breach: {breach.rule}, {breach.detail} ({breach.action}).
        </Notice>
      )}
      {/* Disabled until the stored limits are read: an edit made before they arrive would be overwritten by them. */}
      <fieldset
        disabled={!current.data && !current.error}
        aria-busy={!current.data && !current.error}
        style={{ border: 0, padding: 0, margin: 0, minWidth: 0 }}
      >
        <div className="form-grid">
          <label>
            Max drawdown (% of peak equity)
            <input
              inputMode="decimal"
              pattern="[0-9]+(\.[0-9]+)?"
              value={f.maxDrawdownPercent}
              onChange={(e) => set('maxDrawdownPercent', e.target.value)}
              placeholder="no limit"
            />
          </label>
          <label>
            Daily loss limit{currency ? ` (${currency})` : ''}
            <input
              inputMode="decimal"
              pattern="[0-9]+(\.[0-9]+)?"
              value={f.dailyLossLimit}
              onChange={(e) => set('dailyLossLimit', e.target.value)}
              placeholder="no limit"
            />
          </label>
          <label>
            Max open volume (lots)
            <input
              inputMode="decimal"
              pattern="[0-9]+(\.[0-9]+)?"
              value={f.maxOpenVolume}
              onChange={(e) => set('maxOpenVolume', e.target.value)}
              placeholder="no limit"
            />
          </label>
          <label>
            Trading day starts (UTC hour)
            <input
              type="number"
              min={0}
              max={23}
              value={f.dayResetHourUtc}
              onChange={(e) => set('dayResetHourUtc', e.target.value)}
              placeholder="0"
            />
          </label>
          <label>
            On a breach
            <select value={f.onBreach} onChange={(e) => set('onBreach', e.target.value as Fields['onBreach'])}>
              <option value="pause">pause copying</option>
              <option value="close_and_pause">close everything and lock</option>
            </select>
          </label>
          <label className="inline">
            <input
              type="checkbox"
              checked={f.requireStopLoss}
              onChange={(e) => set('requireStopLoss', e.target.checked)}
            />{' '}
            refuse copies without a stop loss
          </label>
        </div>
        <div className="actions">
          <button type="submit" className="btn btn-primary">
            Save risk limits
          </button>
          {saved && (
            <span role="status" className="good small">
              Saved.
            </span>
          )}
        </div>
      </fieldset>
    </form>
  );
}
