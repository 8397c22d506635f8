/** What a reconcile pass finds and what it does about it. */
export type DriftKind =
  | 'orphan'
  | 'missing_copy'
  | 'volume_mismatch'
  | 'user_closed'
  | 'unlinked_copy'
  | 'duplicate_copy';
export type HealAction =
  | 'close_orphan'
  | 'open_missing'
  | 'reduce_volume'
  | 'accept_volume'
  | 'mark_user_closed'
  | 'adopt_copy'
  | 'close_duplicate'
  | 'none';

export interface Drift {
  kind: DriftKind;
  masterAccountId: string;
  slaveAccountId: string;
  masterPositionId: string | null;
  slavePositionId: string | null;
  detail: string;
  /** What a real run does about it (policy), or `none` with the reason in detail. */
  action: HealAction;
}

export interface ReconcileResult {
  masterAccountId: string;
  dryRun: boolean;
  drift: Drift[];
  healed: Array<Drift & { tradeId: string | null }>;
  /** Slaves whose broker could not be read: not compared this time. */
  unreachable: string[];
}
