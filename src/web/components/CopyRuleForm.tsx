import { useId, useState, type FormEvent } from 'react';
import { app, must } from '../api/client';
import type { CopyRule, RulePreviewAnswer } from '../api/types';
import { formToRule, ruleToForm, type RuleErrors, type RuleForm, type SizingMode } from '../lib/rule-form';
import { Alert } from './Alert';
import { RulePreview } from './RulePreview';

/** A Slave's copy rule. The form checks what it can; the server checks the rest against the Slave's adapter and its reasons show as sent. */
export function CopyRuleForm({
  accountId,
  rule,
  onSaved,
}: {
  accountId: string;
  rule: CopyRule;
  onSaved?: (r: CopyRule) => void;
}) {
  const [f, setF] = useState<RuleForm>(() => ruleToForm(rule));
  const [errors, setErrors] = useState<RuleErrors>({});
  const [serverError, setServerError] = useState<unknown>(null);
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);
  const [preview, setPreview] = useState<RulePreviewAnswer | null>(null);
  const id = useId();
  const set = <K extends keyof RuleForm>(k: K, v: RuleForm[K]) => {
    setF((x) => ({ ...x, [k]: v }));
    setSaved(false);
    setPreview(null);
  };

  // The rule as the form stands, replayed over the Slave's last 30 days (docs/what-if.md); nothing is saved.
  const runPreview = async () => {
    setServerError(null);
    const { rule: r, errors: errs } = formToRule(f);
    setErrors(errs);
    if (!r) return;
    setBusy(true);
    try {
      setPreview(
        await must(
          app.POST('/v1/accounts/{account_id}/rule-preview', {
            params: { path: { account_id: accountId } },
            body: { rule: r, changedOnly: true },
          }),
        ),
      );
    } catch (err) {
      setServerError(err);
    } finally {
      setBusy(false);
    }
  };

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setServerError(null);
    const { rule: r, errors: errs } = formToRule(f);
    setErrors(errs);
    if (!r) return;
    setBusy(true);
    try {
      const savedRule = await must(
        app.PUT('/v1/accounts/{account_id}/copy-rule', { params: { path: { account_id: accountId } }, body: r }),
      );
      setSaved(true);
      onSaved?.(savedRule);
    } catch (err) {
      setServerError(err);
    } finally {
      setBusy(false);
    }
  };

  const field = (k: keyof RuleForm, label: string, input: React.ReactNode, hint?: string) => (
    <div className={`field ${errors[k] ? 'has-error' : ''}`}>
      <label htmlFor={`${id}-${k}`}>{label}</label>
      {input}
      {hint && (
        <div className="muted small" id={`${id}-${k}-hint`}>
          {hint}
        </div>
      )}
      {errors[k] && (
        <div className="bad small" id={`${id}-${k}-err`} role="alert">
          {errors[k]}
        </div>
      )}
    </div>
  );
  type TextField =
    | 'multiplier'
    | 'volume'
    | 'riskPercent'
    | 'minVolume'
    | 'maxVolume'
    | 'maxDelayMs'
    | 'maxSlippage'
    | 'maxSlippagePoints'
    | 'includeSymbols'
    | 'excludeSymbols'
    | 'includeMagic'
    | 'excludeMagic'
    | 'includeComments'
    | 'excludeComments'
    | 'symbolPrefix'
    | 'symbolSuffix'
    | 'masterSymbolPrefix'
    | 'masterSymbolSuffix'
    | 'minTradeAmount';
  const text = (k: TextField, placeholder = '') => (
    <input
      id={`${id}-${k}`}
      name={k}
      value={f[k]}
      placeholder={placeholder}
      onChange={(e) => set(k, e.target.value)}
      aria-invalid={!!errors[k]}
      aria-describedby={errors[k] ? `${id}-${k}-err` : undefined}
    />
  );
  const check = (k: 'reverse' | 'copyStopLoss' | 'copyTakeProfit' | 'copyPendingOrders', label: string) => (
    <label className="inline">
      <input
        type="checkbox"
        name={k}
        checked={f[k]}
        onChange={(e) => set(k, e.target.checked)}
        aria-invalid={!!errors[k]}
      />{' '}
      {label}
      {errors[k] && (
        <span className="bad small" role="alert">
          {' '}
          {errors[k]}
        </span>
      )}
    </label>
  );

  return (
    <form className="rule-form" onSubmit={(e) => void submit(e)} aria-label="Copy rule" noValidate>
      <div className="form-grid">
        {field(
          'mode',
          'Sizing',
          <select
            id={`${id}-mode`}
            name="mode"
            value={f.mode}
            onChange={(e) => set('mode', e.target.value as SizingMode)}
          >
            <option value="multiplier">Multiplier of Master volume</option>
            <option value="fixed">Fixed volume</option>
            <option value="balance_ratio">Balance ratio</option>
            <option value="equity_ratio">Equity ratio</option>
            <option value="risk_percent">Risk % of equity at the stop loss</option>
          </select>,
        )}
        {f.mode === 'fixed'
          ? field('volume', 'Volume (lots)', text('volume', '0.01'))
          : f.mode === 'risk_percent'
            ? field(
                'riskPercent',
                'Risk (% of equity)',
                text('riskPercent', '1'),
                'sized so the stop loss loses this share; a trade without a stop loss is not copied',
              )
            : field(
                'multiplier',
                f.mode === 'multiplier' ? 'Multiplier' : 'Extra multiplier',
                text('multiplier', f.mode === 'multiplier' ? '1' : 'optional'),
              )}
        {field('minVolume', 'Minimum volume', text('minVolume', 'none'))}
        {field('maxVolume', 'Maximum volume', text('maxVolume', 'none'))}
        {field('includeSymbols', 'Only these symbols', text('includeSymbols', 'all'), 'comma separated')}
        {field('excludeSymbols', 'Never these symbols', text('excludeSymbols', 'none'), 'comma separated')}
        {field(
          'symbolMap',
          'Symbol map',
          <textarea
            id={`${id}-symbolMap`}
            name="symbolMap"
            rows={2}
            value={f.symbolMap}
            placeholder="EURUSD=EURUSD.m"
            onChange={(e) => set('symbolMap', e.target.value)}
            aria-invalid={!!errors.symbolMap}
          />,
          'one MASTER=SLAVE per line',
        )}
        {field(
          'symbolSuffix',
          'Slave symbol suffix',
          text('symbolSuffix', 'none'),
          'EURUSD -> EURUSD.m; the map comes first',
        )}
        {field('symbolPrefix', 'Slave symbol prefix', text('symbolPrefix', 'none'))}
        {field('masterSymbolSuffix', 'Master symbol suffix', text('masterSymbolSuffix', 'none'), 'taken off first')}
        {field('masterSymbolPrefix', 'Master symbol prefix', text('masterSymbolPrefix', 'none'), 'taken off first')}
        {field(
          'symbolOverrides',
          'Per-symbol rules',
          <textarea
            id={`${id}-symbolOverrides`}
            name="symbolOverrides"
            rows={2}
            value={f.symbolOverrides}
            placeholder="XAUUSD multiplier=0.5 maxVolume=2"
            onChange={(e) => set('symbolOverrides', e.target.value)}
            aria-invalid={!!errors.symbolOverrides}
          />,
          'one Master symbol a line: off, multiplier=, volume= (fixed), maxVolume=, maxSlippagePoints=',
        )}
        {field(
          'minTradeAmount',
          'Minimum trade amount',
          text('minTradeAmount', 'none'),
          "skip a copy worth less, in the Slave's account currency",
        )}
        {field(
          'sides',
          'Sides',
          <select
            id={`${id}-sides`}
            name="sides"
            value={f.sides}
            onChange={(e) => set('sides', e.target.value as RuleForm['sides'])}
          >
            <option value="both">Buys and sells</option>
            <option value="buy">Buys only</option>
            <option value="sell">Sells only</option>
          </select>,
          "by the Master's side, before reverse",
        )}
        {field(
          'includeMagic',
          'Only these magic numbers',
          text('includeMagic', 'all'),
          'comma separated; MT4/MT5 Masters',
        )}
        {field('excludeMagic', 'Never these magic numbers', text('excludeMagic', 'none'), 'comma separated')}
        {field(
          'includeComments',
          'Only comments containing',
          text('includeComments', 'all'),
          'comma separated, case-insensitive',
        )}
        {field('excludeComments', 'Never comments containing', text('excludeComments', 'none'), 'comma separated')}
        {field('maxDelayMs', 'Max delay (ms)', text('maxDelayMs'), 'skip a copy older than this')}
        {field(
          'maxSlippage',
          'Max slippage (price)',
          text('maxSlippage', 'none'),
          "skip a market copy whose price is worse than the Master's fill by more, e.g. 0.0005",
        )}
        {field(
          'maxSlippagePoints',
          'Max slippage (points)',
          text('maxSlippagePoints', 'none'),
          'the same in ticks of each symbol: 50 is 0.0005 on EURUSD, 0.05 on USDJPY; instead of the price distance',
        )}
      </div>
      <div className="checks">
        {check('reverse', 'Reverse (buy becomes sell)')}
        {check('copyStopLoss', 'Copy stop loss')}
        {check('copyTakeProfit', 'Copy take profit')}
        {check('copyPendingOrders', 'Copy pending orders')}
      </div>
      <Alert error={serverError} title="The server refused the rule" />
      <div className="actions">
        {saved && (
          <span className="good small" role="status">
            Saved.
          </span>
        )}
        <button type="button" className="btn" disabled={busy} onClick={() => void runPreview()}>
          Preview
        </button>
        <button type="submit" className="btn btn-primary" disabled={busy}>
          {busy ? 'Saving…' : 'Save rule'}
        </button>
      </div>
      {preview && <RulePreview preview={preview} />}
    </form>
  );
}
