import type { Group } from '../api/types';

export interface Placement {
  groupId: string;
  role: 'master' | 'slave';
}

/** Which copier group the new account joins, and as what. */
export function GroupPicker({
  groups,
  value,
  onChange,
}: {
  groups: Group[];
  value: Placement;
  onChange: (p: Placement) => void;
}) {
  return (
    <div className="form-grid">
      <label>
        Copier group
        <select name="groupId" value={value.groupId} onChange={(e) => onChange({ ...value, groupId: e.target.value })}>
          <option value="">(none for now)</option>
          {groups.map((g) => (
            <option key={g.id} value={g.id}>
              {g.name}
              {g.master ? '' : ' (no Master yet)'}
            </option>
          ))}
        </select>
      </label>
      <label>
        Role
        <select
          name="role"
          value={value.role}
          onChange={(e) => onChange({ ...value, role: e.target.value as Placement['role'] })}
        >
          <option value="slave">Slave (copies the Master)</option>
          <option value="master">Master (is copied)</option>
        </select>
      </label>
    </div>
  );
}

export const placementBody = (p: Placement) => (p.groupId ? { groupId: p.groupId, role: p.role } : { role: p.role });
