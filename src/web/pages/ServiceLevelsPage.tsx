import { useState } from 'react';
import { getGroupSlo } from '../api/slo';
import { Alert } from '../components/Alert';
import { SloHistory } from '../components/SloHistory';
import { SloLevels } from '../components/SloLevels';
import { SloTargetForm } from '../components/SloTargetForm';
import { useGroups } from '../hooks/useAccounts';
import { useQuery } from '../hooks/useQuery';
import { time } from '../lib/format';
import { Link } from '../lib/router';

/**
 * A copier group's service levels (docs/slo.md): its target, each Slave's levels over the target's window against
 * it, the breaches in progress, and a chosen Slave's month day by day. Reached from the Copier groups page.
 */
export function ServiceLevelsPage({ groupId }: { groupId: string }) {
  const groups = useGroups();
  const group = (groups.data ?? []).find((g) => g.id === groupId);
  const slo = useQuery(() => getGroupSlo(groupId), [groupId], { live: true });
  const [chosen, setChosen] = useState<string | null>(null);
  const view = slo.data;
  const names = new Map((view?.slaves ?? []).map((s) => [s.accountId, s.name]));
  const slave = view?.slaves.find((s) => s.accountId === chosen) ?? null;
  return (
    <section aria-labelledby="slo-title">
      <p className="small">
        <Link to="/groups">← Copier groups</Link>
      </p>
      <h1 id="slo-title">Service levels{group ? `: ${group.name}` : ''}</h1>
      <Alert error={slo.error} />
      {slo.loading && !view ? (
        <p aria-busy="true" className="muted">
          Measuring…
        </p>
      ) : view ? (
        <>
          <section className="card" aria-labelledby="slo-target-title">
            <h2 id="slo-target-title">Target</h2>
            <p className="muted small">
              Every Slave of the group is judged on its own levels over the window. Leave a field empty not to watch it.
              {view.updatedAt ? ` Set ${time(view.updatedAt)}.` : ' No target set yet.'}
            </p>
            <SloTargetForm groupId={groupId} target={view.target} onSaved={() => slo.reload()} />
          </section>
          <section className="card" aria-labelledby="slo-levels-title">
            <h2 id="slo-levels-title">
              Levels now{' '}
              <span className="muted small">
                ({time(view.from)} to {time(view.to)})
              </span>
            </h2>
            <SloLevels view={view} target={view.target} names={names} chosen={chosen} onChoose={setChosen} />
          </section>
          {slave && <SloHistory key={slave.accountId} accountId={slave.accountId} name={slave.name} />}
        </>
      ) : null}
    </section>
  );
}
