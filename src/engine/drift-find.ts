import type { Account } from '../domain/account.js';
import { isIntentAction, opensCopy } from '../domain/intent-action.js';
import type { PositionLink } from '../domain/ledger-types.js';
import type { Position } from '../domain/types.js';
import type { Store } from '../store/store.js';
import { ownCopyOf } from './copy-loop.js';
import type { Drift, ReconcileResult } from './drift.js';

/** What a reconcile pass read of one Master's group, shared by the rules that find each Slave's drift. */
export interface PassView {
  master: Account;
  masterPositions: Position[];
  masterOpen: Map<string, Position>;
  /** Position links of the group; grows with the closed links of held copies read per Slave. */
  links: PositionLink[];
  /** `slaveAccountId|masterPositionId` with a write still unsettled: the settle loop's, not drift. */
  busy: Set<string>;
  /** Master positions the store knows as Master items. */
  known: Set<string>;
  /** A Master position whose order-route fan-out is still to come. */
  fanOutPending: (mp: Position) => boolean;
  /** Younger than the pass: judged on the next one (reads are not one snapshot). */
  young: (at: Date) => boolean;
  result: ReconcileResult;
}

/** One Slave as the pass sees it. */
export interface SlaveView {
  sid: string;
  slavePositions: Position[];
  held: Map<string, Position>;
  /** This Slave's position links (open, and closed ones of copies it still holds once read). */
  mine: PositionLink[];
  openLinks: PositionLink[];
  add: (d: Omit<Drift, 'masterAccountId' | 'slaveAccountId'>) => void;
}

export function slaveView(v: PassView, sid: string, slavePositions: Position[]): SlaveView {
  const mine = v.links.filter((l) => l.slaveAccountId === sid && l.kind === 'position');
  return {
    sid,
    slavePositions,
    held: new Map(slavePositions.map((p) => [p.id, p] as const)),
    mine,
    openLinks: mine.filter((l) => l.open),
    add: (d) => v.result.drift.push({ ...d, masterAccountId: v.master.id, slaveAccountId: sid }),
  };
}

/** Our open links against what the Slave holds: copies gone, orphaned by the Master, or of another size. */
export function linkDrift(v: PassView, s: SlaveView): void {
  for (const l of s.openLinks) {
    const sp = s.held.get(l.slavePositionId);
    const mp = v.masterOpen.get(l.masterPositionId);
    if (v.busy.has(`${s.sid}|${l.masterPositionId}`)) continue;
    if (!sp) {
      s.add({
        kind: 'user_closed',
        masterPositionId: l.masterPositionId,
        slavePositionId: l.slavePositionId,
        detail: mp
          ? 'the copy is gone at the Slave broker while its Master position is open: closed outside the service; it will not be copied again'
          : 'both the Master position and its copy are gone; the link is closed',
        action: 'mark_user_closed',
      });
      continue;
    }
    // The Master's broker no longer holds the position our link copies: whatever closed it (a missed event,
    // broker state lost or restored), the copy is exposure without a Master, so it is drift to close.
    if (!mp) {
      if (v.young(l.createdAt)) continue;
      s.add({
        kind: 'orphan',
        masterPositionId: l.masterPositionId,
        slavePositionId: l.slavePositionId,
        detail: `the Master position ${l.masterPositionId} is closed but its copy ${l.slavePositionId} (${sp.volume.toString()} ${sp.symbol}) is open`,
        action: 'close_orphan',
      });
      continue;
    }
    if (l.volume !== null && !sp.volume.eq(l.volume)) volumeDrift(s, l, sp, l.volume);
  }
}

/** A copy bigger than our books is brought down; a smaller one was reduced outside: the books follow it. */
function volumeDrift(s: SlaveView, l: PositionLink, sp: Position, ours: NonNullable<PositionLink['volume']>): void {
  const bigger = sp.volume.gt(ours);
  s.add({
    kind: 'volume_mismatch',
    masterPositionId: l.masterPositionId,
    slavePositionId: l.slavePositionId,
    detail: bigger
      ? `the copy holds ${sp.volume.toString()}, our books ${ours.toString()}: the excess is closed`
      : `the copy holds ${sp.volume.toString()}, our books ${ours.toString()}: reduced outside the service (or partly filled); exposure is never added back, the books follow the broker`,
    action: bigger ? 'reduce_volume' : 'accept_volume',
  });
}

/**
 * Copies at the Slave that carry one of our tags but no open link: a timed-out write that was applied late, or a
 * duplicate. Adopted when their Master position is open and not copied yet; closed otherwise.
 */
export async function taggedDrift(store: Store, v: PassView, s: SlaveView): Promise<void> {
  const { sid, mine } = s;
  const named = new Set(mine.map((l) => l.slavePositionId));
  const unnamed = s.slavePositions.filter((p) => p.tag && !named.has(p.id)).map((p) => p.id);
  for (const l of await store.trades.linksOfSlavePositions(sid, unnamed)) {
    // Closed links of Master positions gone (open links are all read above): a copy our books closed.
    if (l.masterAccountId !== v.master.id || named.has(l.slavePositionId)) continue;
    mine.push(l);
    v.links.push(l);
  }
  const linked = new Set(mine.map((l) => l.slavePositionId));
  const tagged = s.slavePositions.filter((p) => p.tag && !linked.has(p.id));
  if (tagged.length === 0) return;
  const intents = await store.trades.intentsByTags(
    sid,
    tagged.map((p) => p.tag!),
  );
  for (const p of tagged) {
    const intent = intents.find(
      (i) => i.tag === p.tag || (Array.isArray(i.prevTags) && (i.prevTags as string[]).includes(p.tag!)),
    );
    if (!intent) continue;
    // An earlier attempt's tag of a copy now confirmed and linked under a newer one: the write of an old
    // owner paused past its lease, landed after the new owner resent it. A duplicate whatever its age.
    const lateOriginal =
      intent.state === 'confirmed' && intent.tag !== p.tag && s.openLinks.some((l) => l.intentId === intent.id);
    if (!lateOriginal && v.young(intent.createdAt)) continue;
    const trade = await store.trades.tradeById(intent.tradeId);
    const mpId = trade?.masterPositionId ?? null;
    if (!trade || trade.masterAccountId !== v.master.id || v.busy.has(`${sid}|${mpId ?? ''}`)) continue;
    const alreadyCopied = s.openLinks.some((l) => l.masterPositionId === mpId);
    const adopt =
      mpId &&
      v.masterOpen.has(mpId) &&
      !alreadyCopied &&
      !mine.some((l) => l.masterPositionId === mpId && l.closedReason === 'user_closed');
    s.add(
      adopt
        ? {
            kind: 'unlinked_copy',
            masterPositionId: mpId,
            slavePositionId: p.id,
            detail: `position ${p.id} carries the tag of intent ${intent.id} but was never linked: adopted as the copy`,
            action: 'adopt_copy',
          }
        : {
            kind: alreadyCopied ? 'duplicate_copy' : 'orphan',
            masterPositionId: mpId,
            slavePositionId: p.id,
            detail: `position ${p.id} carries the tag of intent ${intent.id} and ${alreadyCopied ? 'duplicates an existing copy' : 'its Master position is gone'}: closed`,
            action: 'close_duplicate',
          },
    );
  }
}

/** Open Master positions without a copy and without a ledger row explaining why. */
export async function missingDrift(store: Store, v: PassView, s: SlaveView): Promise<void> {
  const { sid } = s;
  for (const mp of v.masterPositions) {
    if (!v.known.has(mp.id) || v.busy.has(`${sid}|${mp.id}`) || v.fanOutPending(mp)) continue;
    if (s.mine.some((l) => l.masterPositionId === mp.id)) continue;
    if (v.result.drift.some((d) => d.slaveAccountId === sid && d.masterPositionId === mp.id)) continue;
    const history = await store.trades.intentsForMasterPosition(v.master.id, mp.id, sid);
    // A ledger row for this copy, whatever its state, means it is not missing: refused or skipped (explained),
    // or on its way (planned, sent, unresolved: the settle loop's), or confirmed (linked, or adopted above).
    if (history.some((i) => isIntentAction(i.action) && opensCopy(i.action))) continue;
    // One of our own copies seen on this Master (the watcher ignores it): healing it open would be the loop.
    if (mp.tag && (await ownCopyOf(store, v.master, mp.tag))) continue;
    s.add({
      kind: 'missing_copy',
      masterPositionId: mp.id,
      slavePositionId: null,
      detail: `the Master position ${mp.id} (${mp.volume.toString()} ${mp.symbol}) has no copy and no ledger row saying why: opened now if still fresh by the rule (else recorded as stale)`,
      action: 'open_missing',
    });
  }
}
