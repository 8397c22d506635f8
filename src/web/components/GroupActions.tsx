import { useState, type FormEvent } from 'react';
import { deleteGroup, renameGroup, setGroupCopying } from '../api/actions';
import { ApiError } from '../api/errors';
import type { Group } from '../api/types';
import { Alert } from './Alert';
import { Modal } from './Modal';

/** Rename, pause, resume and delete one copier group. */
export function GroupActions({ group, onChanged }: { group: Group; onChanged: () => void }) {
  const [renaming, setRenaming] = useState(false);
  const [name, setName] = useState(group.name);
  const [deleting, setDeleting] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const members = [...(group.master ? [group.master] : []), ...group.slaves];
  const act = async (fn: () => Promise<unknown>) => {
    setError(null);
    try {
      await fn();
      onChanged();
      return true;
    } catch (err) {
      setError(err);
      return false;
    }
  };
  const rename = async (e: FormEvent) => {
    e.preventDefault();
    if (await act(() => renameGroup(group.id, name.trim()))) setRenaming(false);
  };
  return (
    <div className="group-actions">
      <div className="actions">
        {renaming ? (
          <form className="inline-form" onSubmit={(e) => void rename(e)} aria-label={`Rename ${group.name}`}>
            <label className="sr-only" htmlFor={`rename-${group.id}`}>
              New name of {group.name}
            </label>
            <input
              id={`rename-${group.id}`}
              value={name}
              onChange={(e) => setName(e.target.value)}
              required
              maxLength={100}
              autoFocus
            />
            <button type="submit" className="btn btn-small btn-primary">
              Save name
            </button>
            <button
              type="button"
              className="btn btn-small"
              onClick={() => {
                setRenaming(false);
                setName(group.name);
              }}
            >
              Cancel
            </button>
          </form>
        ) : (
          <button type="button" className="btn btn-small" onClick={() => setRenaming(true)}>
            Rename
          </button>
        )}
        <button
          type="button"
          className="btn btn-small"
          disabled={members.length === 0}
          onClick={() => void act(() => setGroupCopying(group.id, 'pause'))}
        >
          Pause group
        </button>
        <button
          type="button"
          className="btn btn-small"
          disabled={members.length === 0}
          onClick={() => void act(() => setGroupCopying(group.id, 'resume'))}
        >
          Resume group
        </button>
        <button type="button" className="btn btn-small btn-danger" onClick={() => setDeleting(true)}>
          Delete group…
        </button>
      </div>
      <Alert error={error} />
      {deleting && (
        <DeleteGroupDialog
          group={group}
          onClose={() => setDeleting(false)}
          onDeleted={() => {
            setDeleting(false);
            onChanged();
          }}
        />
      )}
    </div>
  );
}

function DeleteGroupDialog({
  group,
  onClose,
  onDeleted,
}: {
  group: Group;
  onClose: () => void;
  onDeleted: () => void;
}) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const blocked = error instanceof ApiError && error.code === 'open_copies';
  const run = async (force: boolean) => {
    setBusy(true);
    setError(null);
    try {
      await deleteGroup(group.id, force);
      onDeleted();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const count = (group.master ? 1 : 0) + group.slaves.length;
  return (
    <Modal title={`Delete group ${group.name}`} onClose={onClose} busy={busy}>
      <p>
        The group goes; its {count} account{count === 1 ? '' : 's'} stay connected, out of any group, and nothing is
        copied between them any more.
      </p>
      <Alert error={error} />
      <div className="actions">
        <button type="button" className="btn" onClick={onClose} autoFocus>
          Cancel
        </button>
        {blocked ? (
          <button type="button" className="btn btn-danger" disabled={busy} onClick={() => void run(true)}>
            Delete anyway, leave the copies open
          </button>
        ) : (
          <button type="button" className="btn btn-danger" disabled={busy} onClick={() => void run(false)}>
            Delete group
          </button>
        )}
      </div>
    </Modal>
  );
}
