import { randomBytes } from 'node:crypto';
import type { SealedRepo } from '../store/repos/sealed.js';
import { CredentialBox, keyId, readKeyFile, writeKeyFile, type KeyRing } from './credential-box.js';

export interface RotationReport {
  /** The key every value is sealed under afterwards. */
  keyId: string;
  resealed: number;
  /** Values already under the current key (an interrupted run's work, or fresh writes). */
  alreadyCurrent: number;
  /** The key file no longer lists the previous key(s): the rotation is complete. */
  finished: boolean;
}

/**
 * Re-seals every sealed value not yet under the ring's current key. Idempotent and resumable: each value is
 * replaced by compare-and-set, and a run that stops half way leaves values under either key, both of which
 * the ring opens. Repeats until a pass finds nothing left (writes that landed meanwhile under an old key).
 */
export async function resealAll(
  sealed: SealedRepo,
  box: CredentialBox,
  opts: { onValue?: (n: number) => void } = {},
): Promise<{ resealed: number; alreadyCurrent: number }> {
  let resealed = 0;
  let alreadyCurrent = -1;
  for (let pass = 0; pass < 5; pass++) {
    const values = await sealed.all();
    const stale = values.filter((v) => !box.isCurrent(v.sealed));
    if (alreadyCurrent < 0) alreadyCurrent = values.length - stale.length;
    if (stale.length === 0) return { resealed, alreadyCurrent };
    for (const v of stale) {
      if (await sealed.replace(v, box.seal(box.open(v.sealed)))) resealed++;
      opts.onValue?.(resealed);
    }
  }
  throw new Error(
    'sealed values keep changing under an old key: stop the processes that still run with it, then run the rotation again',
  );
}

/**
 * `copytrade secrets rotate`. With a key file: a fresh key goes first in the file (the old one stays listed,
 * so every process started from now on opens both), every value is re-sealed, then the old key leaves the
 * file. A run that was interrupted finds the file still listing two keys and carries on with the same new
 * key. With COPYTRADE_SECRET_KEY: the operator set the new key there and the old one in
 * COPYTRADE_SECRET_KEY_PREVIOUS; this re-seals, and the old one can then be removed from the environment.
 */
export async function rotateKeys(
  sealed: SealedRepo,
  ring: KeyRing,
  opts: { onValue?: (n: number) => void } = {},
): Promise<RotationReport> {
  if (ring.source === 'memory') throw new Error('the in-memory store has no key to rotate');
  let current = ring.current;
  let previous = ring.previous;
  if (ring.source === 'file' && previous.length === 0) {
    current = randomBytes(32);
    previous = [ring.current];
    writeKeyFile(ring.file!, [current, ...previous]);
  }
  const box = new CredentialBox(current, previous);
  const r = await resealAll(sealed, box, opts);
  if (ring.source === 'file') {
    // Only the key every value is now sealed under stays; re-read so a concurrent rotation is not undone.
    const [onDisk] = readKeyFile(ring.file!);
    if (!onDisk || keyId(onDisk) !== keyId(current))
      throw new Error(`${ring.file} changed during the rotation; run it again`);
    writeKeyFile(ring.file!, [current]);
  }
  return { keyId: keyId(current), ...r, finished: ring.source === 'file' || previous.length === 0 };
}
