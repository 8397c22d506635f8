import { sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  boolean,
  doublePrecision,
  index,
  integer,
  jsonb,
  numeric,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';

/**
 * One schema for PGlite and PostgreSQL. Volumes and prices are `numeric` (strings in JS, Decimal in the
 * domain): never floats. Timestamps are timestamptz.
 */

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });
const createdAt = () => ts('created_at').notNull().defaultNow();

export const users = pgTable(
  'users',
  {
    id: text('id').primaryKey(),
    email: text('email').notNull(),
    passwordHash: text('password_hash').notNull(),
    createdAt: createdAt(),
    /** The TOTP secret, sealed by the credential box; set at enrolment, kept while the factor is on. */
    totpSecretEnc: text('totp_secret_enc'),
    /** When the second factor was confirmed with a code; null = sign-in asks for the password only. */
    totpEnabledAt: ts('totp_enabled_at'),
    /** The last TOTP time step accepted: a code is good once (RFC 6238 section 5.2). */
    totpLastStep: bigint('totp_last_step', { mode: 'number' }),
    /** A signed-up user whose email is not verified yet (cannot sign in); users the operator creates are false. */
    verificationPending: boolean('verification_pending').notNull().default(false),
  },
  (t) => [uniqueIndex('users_email_uq').on(sql`lower(${t.email})`)],
);

export const accessTokens = pgTable(
  'access_tokens',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    tokenHash: text('token_hash').notNull(),
    createdAt: createdAt(),
    expiresAt: ts('expires_at').notNull(),
    revokedAt: ts('revoked_at'),
    lastUsedAt: ts('last_used_at'),
  },
  (t) => [uniqueIndex('access_tokens_hash_uq').on(t.tokenHash), index('access_tokens_user_idx').on(t.userId)],
);

export const apiKeys = pgTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    /** First characters of the key, shown in lists so a user can tell keys apart without the secret. */
    displayPrefix: text('display_prefix').notNull(),
    keyHash: text('key_hash').notNull(),
    createdAt: createdAt(),
    /** Set when the key was rotated: it keeps working until then (the overlap window). */
    expiresAt: ts('expires_at'),
    revokedAt: ts('revoked_at'),
    lastUsedAt: ts('last_used_at'),
    replacedBy: text('replaced_by'),
    /** Dedicated family V limits set by the operator (requests per window); null = the configured default. */
    rateLimitWrites: integer('rate_limit_writes'),
    rateLimitReads: integer('rate_limit_reads'),
  },
  (t) => [uniqueIndex('api_keys_hash_uq').on(t.keyHash), index('api_keys_user_idx').on(t.userId)],
);

export const copierGroups = pgTable(
  'copier_groups',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('copier_groups_user_idx').on(t.userId)],
);

export const accounts = pgTable(
  'accounts',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    platform: text('platform').notNull(),
    role: text('role').notNull(),
    status: text('status').notNull(),
    name: text('name').notNull(),
    groupId: text('group_id').references(() => copierGroups.id, { onDelete: 'set null' }),
    /** The broker's own id of the account (what the adapter addresses). */
    brokerAccountId: text('broker_account_id').notNull(),
    /** The account number the user sees at the broker. */
    brokerAccountNumber: text('broker_account_number').notNull(),
    brokerName: text('broker_name'),
    environment: text('environment'),
    currency: text('currency'),
    /** Broker credentials (passwords, OAuth tokens), AES-256-GCM encrypted; null for the in-process simulator. */
    credentialsEnc: text('credentials_enc'),
    health: jsonb('health').notNull(),
    /** Last balance/equity read from the broker, for lists that must not call every broker. */
    balance: numeric('balance'),
    equity: numeric('equity'),
    statusReason: text('status_reason'),
    /**
     * Platform + environment/server + account number, normalised (domain/broker-identity.ts): unique in the
     * deployment, so one broker account is connected once. Null only for a duplicate disabled by migration 0004.
     */
    brokerIdentity: text('broker_identity'),
    /**
     * Set when the user removed the connection: the row stays so its trades and its Slaves' ledger keep their
     * account, with its credentials wiped and its broker identity released (the broker account may be connected again).
     */
    removedAt: ts('removed_at'),
    createdAt: createdAt(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
    /**
     * Set by a trigger (migration 0012) from a sequence on insert and on every update that changes a column other
     * than health, balance, equity and updated_at: a version of what only the user or the engine changes, which a
     * health round (every live account, every round) leaves alone, and which never comes back (a row deleted and
     * inserted again gets a new one). Written by nothing else.
     */
    rev: bigint('rev', { mode: 'number' }).notNull().default(0),
  },
  (t) => [
    // Serves the user's lookups and pages of the user's list in id order (AccountsRepo.listPage) in one range scan.
    index('accounts_user_id_idx').on(t.userId, t.id),
    uniqueIndex('accounts_broker_identity_uq').on(t.brokerIdentity),
    index('accounts_group_idx').on(t.groupId),
    // A removed row keeps its broker columns for the history; only live rows must differ.
    uniqueIndex('accounts_broker_uq')
      .on(t.userId, t.platform, t.brokerAccountId, t.environment)
      .where(sql`${t.removedAt} is null`),
  ],
);

/** The copy rule of one Slave in its group; `rule` is the validated CopyRule JSON (domain/copy-rule.ts). */
export const copyRules = pgTable('copy_rules', {
  slaveAccountId: text('slave_account_id')
    .primaryKey()
    .references(() => accounts.id, { onDelete: 'cascade' }),
  rule: jsonb('rule').notNull(),
  updatedAt: ts('updated_at').notNull().defaultNow(),
});

/** A trade on a Master (sent through the API or seen by the watcher) and what the Master's broker said. */
export const trades = pgTable(
  'trades',
  {
    id: text('id').primaryKey(),
    // No foreign keys (migration 0016): the record writes this row before the first send; see the migration.
    userId: text('user_id').notNull(),
    masterAccountId: text('master_account_id').notNull(),
    groupId: text('group_id'),
    source: text('source').notNull(),
    action: text('action').notNull(),
    symbol: text('symbol').notNull(),
    side: text('side').notNull(),
    orderType: text('order_type').notNull(),
    volume: numeric('volume').notNull(),
    price: numeric('price'),
    stopLoss: numeric('stop_loss'),
    takeProfit: numeric('take_profit'),
    tag: text('tag').notNull(),
    status: text('status').notNull(),
    masterOutcome: jsonb('master_outcome'),
    masterPositionId: text('master_position_id'),
    masterOrderId: text('master_order_id'),
    fillPrice: numeric('fill_price'),
    requestId: text('request_id'),
    copiedTo: integer('copied_to').notNull().default(0),
    /**
     * Stable id of the master action this trade copies (account + broker position/order id + kind + sequence).
     * Unique: a restart or reconnect that sees the same action again cannot copy it twice. Null for API orders.
     */
    actionId: text('action_id'),
    /** When the master action happened at the broker; copies older than a rule's maxDelayMs are stale. */
    actionAt: ts('action_at'),
    /** The Master trade's magic number and comment, where its platform carries them (migration 0028). */
    masterMagic: bigint('master_magic', { mode: 'number' }),
    masterComment: text('master_comment'),
    createdAt: createdAt(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    index('trades_user_idx').on(t.userId, t.createdAt),
    uniqueIndex('trades_tag_uq').on(t.tag),
    uniqueIndex('trades_action_uq').on(t.actionId),
    index('trades_master_pos_idx').on(t.masterAccountId, t.masterPositionId),
    // The settle loop (every 2 s) and each reconcile pass look for the few trades still waiting: recorded, pending,
    // unresolved. Partial, so the index stays as small as that set.
    index('trades_waiting_idx').on(t.status).where(sql`${t.status} in ('recorded', 'pending', 'unresolved')`),
  ],
);

/**
 * The copy ledger: one intent per (master action, Slave). Written in state `planned` before anything is
 * sent; `tag` is the deterministic correlation tag that makes a resend provably idempotent.
 */
export const copyIntents = pgTable(
  'copy_intents',
  {
    id: text('id').primaryKey(),
    // No foreign keys (dropped in 0011): they were a row lock and a lookup per intent in the record before any
    // send (a fifth of a 1000-row insert), for cascades nothing uses (trades and accounts are never deleted,
    // accounts.remove is a soft delete). The store writes intents only beside their trade (recordAction,
    // recordIntents check every row names it), and Slave ids come from the accounts the planner read.
    tradeId: text('trade_id').notNull(),
    slaveAccountId: text('slave_account_id').notNull(),
    tag: text('tag').notNull(),
    action: text('action').notNull(),
    symbol: text('symbol').notNull(),
    side: text('side').notNull(),
    plannedVolume: numeric('planned_volume'),
    plannedPrice: numeric('planned_price'),
    stopLoss: numeric('stop_loss'),
    takeProfit: numeric('take_profit'),
    state: text('state').notNull(),
    skipReason: text('skip_reason'),
    outcome: jsonb('outcome'),
    brokerOrderId: text('broker_order_id'),
    brokerPositionId: text('broker_position_id'),
    filledVolume: numeric('filled_volume'),
    fillPrice: numeric('fill_price'),
    slippage: numeric('slippage'),
    /** Hop latencies in ms: plan, record, send (to adapter), broker ack. */
    latency: jsonb('latency'),
    attempts: integer('attempts').notNull().default(0),
    /** The Slave position or order a follow-up action (close, reduce, modify, cancel) addresses. */
    targetId: text('target_id'),
    /** Tags of earlier attempts proven absent at the broker (a resend takes a new tag). */
    prevTags: jsonb('prev_tags'),
    /**
     * What the sizing read, written with the row at plan time (domain/receipts/sizing-record.ts): the rule, the
     * balances or equities, the symbol's spec, the quote-to-account rate and the result. Receipts bind it; null for
     * rows the sizing did not decide (follow-ups, refusals). Migration 0023.
     */
    sizingInputs: jsonb('sizing_inputs'),
    /** The Slave's rule revision (rule_revisions.seq) the row was planned under; null before migration 0025. */
    ruleRevision: integer('rule_revision'),
    createdAt: createdAt(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('copy_intents_tag_uq').on(t.tag),
    index('copy_intents_trade_idx').on(t.tradeId),
    index('copy_intents_slave_idx').on(t.slaveAccountId, t.createdAt),
    index('copy_intents_state_idx').on(t.state),
  ],
);

/**
 * Which Slave position copies which Master position (kind `position`), or which Slave pending order copies
 * which Master pending order (kind `order`, ids in the *PositionId columns); closes and modifications follow these links.
 */
export const positionLinks = pgTable(
  'position_links',
  {
    id: text('id').primaryKey(),
    kind: text('kind').notNull().default('position'),
    // No foreign keys (migration 0016), as copy_intents (0011): see the migration.
    masterAccountId: text('master_account_id').notNull(),
    masterPositionId: text('master_position_id').notNull(),
    slaveAccountId: text('slave_account_id').notNull(),
    slavePositionId: text('slave_position_id').notNull(),
    intentId: text('intent_id'),
    /** The Slave position's volume as last written by us (partial closes size from it). */
    volume: numeric('volume'),
    open: boolean('open').notNull().default(true),
    /** Why the link closed: master_closed, user_closed (never reopen), panic_close, filled, cancelled. */
    closedReason: text('closed_reason'),
    createdAt: createdAt(),
    closedAt: ts('closed_at'),
  },
  (t) => [
    index('position_links_master_idx').on(t.masterAccountId, t.masterPositionId),
    // MetaTrader reuses a pending order's ticket as its position's id: the kind is part of the identity.
    uniqueIndex('position_links_slave_kind_uq').on(t.slaveAccountId, t.kind, t.slavePositionId),
  ],
);

/**
 * What the watcher last saw of each Master position and pending order. On start it diffs the broker's
 * current state against this to synthesise the actions it missed while down; `seq` numbers the item's actions.
 */
export const masterItems = pgTable(
  'master_items',
  {
    // No foreign key (migration 0016): the record upserts the Master's item in the same statement as its trade.
    accountId: text('account_id').notNull(),
    kind: text('kind').notNull(),
    itemId: text('item_id').notNull(),
    symbol: text('symbol').notNull(),
    side: text('side').notNull(),
    orderType: text('order_type').notNull(),
    volume: numeric('volume').notNull(),
    price: numeric('price'),
    stopLoss: numeric('stop_loss'),
    takeProfit: numeric('take_profit'),
    tag: text('tag'),
    open: boolean('open').notNull().default(true),
    seq: integer('seq').notNull().default(0),
    originTradeId: text('origin_trade_id'),
    openedAt: ts('opened_at'),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.accountId, t.kind, t.itemId] }),
    index('master_items_open_idx').on(t.accountId, t.open),
  ],
);

/**
 * Per Master account, how far its broker's deal history has been replayed: every deal executed before `dealsAt` has
 * its ledger rows (copied, or skipped with the reason). A watch that starts after a gap (a start, a crash, a
 * failover) reads the deals since this point before it trusts the stream, so a trade opened and closed while
 * nobody watched is never left without a trace. It only moves forward.
 */
export const masterCursors = pgTable('master_cursors', {
  accountId: text('account_id').primaryKey(),
  dealsAt: ts('deals_at').notNull(),
  updatedAt: ts('updated_at').notNull().defaultNow(),
});

/**
 * The last connection test of each account (the reads made right after connecting it, or when the user asks again):
 * what the broker answered, or its words when it refused a read. A table of its own, not an accounts column: it
 * is read at connect, assignment and on request only, and it does not move the accounts row's rev.
 */
export const accountConnectionTests = pgTable('account_connection_tests', {
  accountId: text('account_id')
    .primaryKey()
    .references(() => accounts.id, { onDelete: 'cascade' }),
  result: jsonb('result').notNull(),
  checkedAt: ts('checked_at').notNull(),
});

/** Every request on both families, so users can reconcile what they sent against what the brokers did. */
export const requestRecords = pgTable(
  'request_records',
  {
    id: text('id').primaryKey(),
    userId: text('user_id'),
    credentialKind: text('credential_kind'),
    credentialId: text('credential_id'),
    method: text('method').notNull(),
    route: text('route').notNull(),
    path: text('path').notNull(),
    status: integer('status').notNull(),
    bodyDigest: text('body_digest'),
    response: jsonb('response'),
    durationMs: numeric('duration_ms'),
    idempotencyKey: text('idempotency_key'),
    createdAt: createdAt(),
  },
  (t) => [index('request_records_user_idx').on(t.userId, t.createdAt)],
);

/** Fixed-window counters for per-user limits that must hold across restarts and processes. */
export const rateLimitHits = pgTable(
  'rate_limit_hits',
  {
    id: text('id').primaryKey(),
    bucket: text('bucket').notNull(),
    at: ts('at').notNull().defaultNow(),
  },
  (t) => [index('rate_limit_hits_bucket_idx').on(t.bucket, t.at)],
);

/**
 * Token buckets of family V's rate limits, shared by every API process on one store. UNLOGGED in the migration:
 * no WAL and no fsync per request, and a crash that empties it only refills every bucket.
 */
export const rateBuckets = pgTable('rate_buckets', {
  bucket: text('bucket').primaryKey(),
  tokens: doublePrecision('tokens').notNull(),
  updatedAt: ts('updated_at').notNull(),
});

/** Failed sign-ins per subject (an account's email, a client address): the growing delay before the next try. */
export const signInFailures = pgTable('sign_in_failures', {
  subject: text('subject').primaryKey(),
  failures: integer('failures').notNull(),
  lastFailureAt: ts('last_failure_at').notNull(),
  blockedUntil: ts('blocked_until'),
});

/**
 * The event outbox: written in the same transaction as the state change that causes it, so no event is lost
 * on a crash. `seq` orders events per account (per user for events without an account); `cursor` is the
 * global order the stream and replay resume from.
 */
export const events = pgTable(
  'events',
  {
    cursor: bigserial('cursor', { mode: 'number' }).primaryKey(),
    id: text('id').notNull(),
    userId: text('user_id').notNull(),
    accountId: text('account_id'),
    seq: integer('seq').notNull(),
    type: text('type').notNull(),
    schemaVersion: integer('schema_version').notNull().default(1),
    payload: jsonb('payload').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('events_id_uq').on(t.id),
    uniqueIndex('events_scope_seq_uq').on(t.userId, t.accountId, t.seq),
    index('events_user_cursor_idx').on(t.userId, t.cursor),
  ],
);

/**
 * The last sequence number handed out per event scope (user + account, '' for user-wide events): an append
 * bumps it with one upsert instead of reading max(seq) over the user's history, and the row lock it takes
 * serialises writers of one scope until commit.
 */
export const eventSeqs = pgTable(
  'event_seqs',
  {
    userId: text('user_id').notNull(),
    scope: text('scope').notNull(),
    lastSeq: integer('last_seq').notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.scope] })],
);

export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    url: text('url').notNull(),
    description: text('description'),
    /** Event types delivered; empty = all. */
    eventTypes: jsonb('event_types').notNull(),
    /** Signing secrets, AES-GCM sealed: the current one and, during a rotation overlap, the previous one. */
    secretEnc: text('secret_enc').notNull(),
    previousSecretEnc: text('previous_secret_enc'),
    previousSecretExpiresAt: ts('previous_secret_expires_at'),
    enabled: boolean('enabled').notNull().default(true),
    disabledReason: text('disabled_reason'),
    /** Events after this cursor are still to be delivered to this endpoint. */
    deliveredCursor: bigint('delivered_cursor', { mode: 'number' }).notNull().default(0),
    failingSince: ts('failing_since'),
    createdAt: createdAt(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [index('webhook_endpoints_user_idx').on(t.userId)],
);

/** One row per delivery attempt: status, latency and a snippet of the answer. */
export const webhookAttempts = pgTable(
  'webhook_attempts',
  {
    id: text('id').primaryKey(),
    endpointId: text('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    eventId: text('event_id').notNull(),
    attempt: integer('attempt').notNull(),
    status: integer('status'),
    ok: boolean('ok').notNull(),
    latencyMs: integer('latency_ms'),
    responseSnippet: text('response_snippet'),
    error: text('error'),
    nextAttemptAt: ts('next_attempt_at'),
    createdAt: createdAt(),
  },
  (t) => [
    index('webhook_attempts_endpoint_idx').on(t.endpointId, t.createdAt),
    index('webhook_attempts_event_idx').on(t.eventId),
  ],
);

/** Idempotency-Key records of family V writes (IETF draft semantics). */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    userId: text('user_id').notNull(),
    key: text('key').notNull(),
    route: text('route').notNull(),
    bodyDigest: text('body_digest').notNull(),
    /** null while the first request is still in flight. */
    status: integer('status'),
    response: jsonb('response'),
    /** The request that claimed the key (trades.request_id of what it did), to settle it after a crash. */
    requestId: text('request_id'),
    /** The process that claimed it: a restart settles only what an earlier process left in flight. */
    claimedBy: text('claimed_by'),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.userId, t.key] }),
    index('idempotency_keys_in_flight_idx').on(t.createdAt).where(sql`${t.status} is null`),
  ],
);

/** Panic-close as a tracked job: progress and per-position results readable while it runs. */
export const panicJobs = pgTable(
  'panic_jobs',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    scope: text('scope').notNull(),
    targetId: text('target_id').notNull(),
    state: text('state').notNull(),
    cancelPending: boolean('cancel_pending').notNull().default(true),
    progress: jsonb('progress').notNull(),
    error: text('error'),
    createdAt: createdAt(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
    finishedAt: ts('finished_at'),
  },
  (t) => [index('panic_jobs_user_idx').on(t.userId, t.createdAt)],
);

/**
 * Risk limits of a Slave (scope account) or of a copier group (scope group, applied to each of its Slaves),
 * and the monitor's running state per target: peak equity, the trading day's start equity, the last breach.
 */
export const riskLimits = pgTable(
  'risk_limits',
  {
    targetId: text('target_id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    scope: text('scope').notNull(),
    limits: jsonb('limits').notNull(),
    state: jsonb('state').notNull(),
    createdAt: createdAt(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [index('risk_limits_user_idx').on(t.userId)],
);

/** Shadow mode: while enabled, a Slave's copies go to this simulated twin instead of its broker. */
export const shadowTwins = pgTable('shadow_twins', {
  accountId: text('account_id')
    .primaryKey()
    .references(() => accounts.id, { onDelete: 'cascade' }),
  simAccountId: text('sim_account_id').notNull(),
  enabled: boolean('enabled').notNull(),
  startBalance: numeric('start_balance').notNull(),
  createdAt: createdAt(),
  updatedAt: ts('updated_at').notNull().defaultNow(),
});

/**
 * Balance and equity of an account over time, from the health monitor's reads: at most one row per account per
 * minute, written in one statement per round, and pruned past the retention (see the monitor).
 */
export const equitySnapshots = pgTable(
  'equity_snapshots',
  {
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    at: ts('at').notNull(),
    balance: numeric('balance').notNull(),
    equity: numeric('equity').notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.at] }), index('equity_snapshots_at_idx').on(t.at)],
);

/**
 * Ownership of a resource (`account:<id>`, `ctrader:<env>`) by one worker process at a time. `epoch` is the
 * fencing token: it grows by one at every change of owner, and the store refuses a write fenced by an older one.
 * Expiry is on the database's clock, so workers' clocks never matter.
 */
export const leases = pgTable(
  'leases',
  {
    key: text('key').primaryKey(),
    owner: text('owner').notNull(),
    epoch: bigint('epoch', { mode: 'number' }).notNull(),
    expiresAt: ts('expires_at').notNull(),
    acquiredAt: ts('acquired_at').notNull().defaultNow(),
  },
  (t) => [index('leases_owner_idx').on(t.owner)],
);

/**
 * Terminal bridge tokens (issue 47): the bearer secret an EA in the user's own terminal connects one platform A
 * account with. Only the SHA-256 is kept (shown once); a rotation sets `expiresAt` on the tokens it replaces.
 */
export const bridgeTokens = pgTable(
  'bridge_tokens',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id').notNull(),
    hash: text('hash').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    expiresAt: ts('expires_at'),
    revokedAt: ts('revoked_at'),
  },
  (t) => [uniqueIndex('bridge_tokens_hash_idx').on(t.hash), index('bridge_tokens_account_idx').on(t.accountId)],
);

/** Per Slave account, the last receipt of its chain: locked by the sealer while it appends (docs/receipts.md). */
export const receiptChains = pgTable('receipt_chains', {
  accountId: text('account_id').primaryKey(),
  seq: integer('seq').notNull(),
  hash: text('hash').notNull(),
  updatedAt: ts('updated_at').notNull().defaultNow(),
});

/** One receipt per ended ledger row, chained per Slave account; `body` is the exact canonical JSON that was hashed. */
export const receipts = pgTable(
  'receipts',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id').notNull(),
    userId: text('user_id').notNull(),
    seq: integer('seq').notNull(),
    intentId: text('intent_id').notNull(),
    /** UTC day (YYYY-MM-DD) the receipt was sealed on: its day's signed head covers it. */
    day: text('day').notNull(),
    prevHash: text('prev_hash').notNull(),
    hash: text('hash').notNull(),
    body: text('body').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('receipts_account_seq_uq').on(t.accountId, t.seq),
    uniqueIndex('receipts_intent_uq').on(t.intentId),
    index('receipts_account_day_idx').on(t.accountId, t.day),
  ],
);

/** The signed head of an account's chain per UTC day (the day's last receipt), Ed25519 with the deployment's key. */
export const receiptHeads = pgTable(
  'receipt_heads',
  {
    accountId: text('account_id').notNull(),
    day: text('day').notNull(),
    seq: integer('seq').notNull(),
    hash: text('hash').notNull(),
    keyId: text('key_id').notNull(),
    signature: text('signature').notNull(),
    signedAt: ts('signed_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ name: 'receipt_heads_pk', columns: [t.accountId, t.day] })],
);

/** A copier group's service-level target (docs/slo.md): what each of its Slaves must meet. Migration 0026. */
export const sloTargets = pgTable('slo_targets', {
  groupId: text('group_id')
    .primaryKey()
    .references(() => copierGroups.id, { onDelete: 'cascade' }),
  userId: text('user_id').notNull(),
  target: jsonb('target').notNull(),
  createdAt: createdAt(),
  updatedAt: ts('updated_at').notNull().defaultNow(),
});

/**
 * A breach in progress, one per Slave and metric: written with its slo.breached event, deleted with its
 * slo.recovered event, so a breach that lasts raises one event whichever process evaluates, and after a restart.
 */
export const sloBreaches = pgTable(
  'slo_breaches',
  {
    accountId: text('account_id').notNull(),
    metric: text('metric').notNull(),
    groupId: text('group_id').notNull(),
    userId: text('user_id').notNull(),
    value: jsonb('value').notNull(),
    since: ts('since').notNull(),
  },
  (t) => [primaryKey({ name: 'slo_breaches_pk', columns: [t.accountId, t.metric] })],
);

/**
 * Every change of a copy rule or of risk limits, numbered per target (a Slave account: its rule and own limits; a
 * copier group: its limits). `snapshot` is the whole state after the change ({rule, riskLimits}), `diff` the fields
 * it changed ([{field, before, after}]). Migration 0025; docs/what-if.md.
 */
export const ruleRevisions = pgTable(
  'rule_revisions',
  {
    targetId: text('target_id').notNull(),
    seq: integer('seq').notNull(),
    scope: text('scope').notNull(),
    userId: text('user_id').notNull(),
    /** Who: `user:<id>` or `key:<id>`; `migration` for the state found when revisions began. */
    actor: text('actor').notNull(),
    /** What wrote it: copy_rule, risk_limits, rollback, migration. */
    source: text('source').notNull(),
    snapshot: jsonb('snapshot').notNull(),
    diff: jsonb('diff').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ name: 'rule_revisions_pk', columns: [t.targetId, t.seq] }),
    index('rule_revisions_user_idx').on(t.userId),
  ],
);

/**
 * A user's notification channel for built-in alerts (docs/alerts.md): an email address (the operator's SMTP server
 * sends) or a Telegram chat (the user's bot token, sealed like broker credentials). Like a webhook endpoint it reads
 * the event outbox after its cursor; unlike one it groups what it read into one message per window.
 */
export const alertChannels = pgTable(
  'alert_channels',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    kind: text('kind').notNull(),
    name: text('name'),
    emailTo: text('email_to'),
    telegramChatId: text('telegram_chat_id'),
    /** The Telegram bot token, AES-GCM sealed; `secretHint` is its masked form (the last 4 characters). */
    secretEnc: text('secret_enc'),
    secretHint: text('secret_hint'),
    enabled: boolean('enabled').notNull().default(true),
    /** Events up to this cursor were sent (or did not match a rule). */
    deliveredCursor: bigint('delivered_cursor', { mode: 'number' }).notNull().default(0),
    /** When the first unsent matching event was seen: the message waits the gather delay from here. */
    pendingSince: ts('pending_since'),
    /** The last message sent (or given up): the next waits until the window after it has passed. */
    lastSentAt: ts('last_sent_at'),
    /** Failed sends of the pending message in a row, and when the next try may run. */
    failures: integer('failures').notNull().default(0),
    nextAttemptAt: ts('next_attempt_at'),
    createdAt: createdAt(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [index('alert_channels_user_idx').on(t.userId)],
);

/** Which kinds of event alert, per user; a kind without a row is on (docs/alerts.md). */
export const alertRules = pgTable(
  'alert_rules',
  {
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    kind: text('kind').notNull(),
    enabled: boolean('enabled').notNull(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.kind] })],
);

/** One row per send of an alert message (grouped events) or a test: the shape of webhook_attempts. */
export const alertDeliveries = pgTable(
  'alert_deliveries',
  {
    id: text('id').primaryKey(),
    channelId: text('channel_id')
      .notNull()
      .references(() => alertChannels.id, { onDelete: 'cascade' }),
    /** 1.. for the scheduled sends of one pending message; 0 for a test. */
    attempt: integer('attempt').notNull(),
    /** The SMTP reply code or the Bot API's HTTP status; null when there was no answer. */
    status: integer('status'),
    ok: boolean('ok').notNull(),
    latencyMs: integer('latency_ms'),
    responseSnippet: text('response_snippet'),
    error: text('error'),
    nextAttemptAt: ts('next_attempt_at'),
    /** Events the message summarised, the first of them, and the outbox cursor it covered up to. */
    eventCount: integer('event_count').notNull().default(0),
    firstEventId: text('first_event_id'),
    lastCursor: bigint('last_cursor', { mode: 'number' }),
    subject: text('subject').notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('alert_deliveries_channel_idx').on(t.channelId, t.createdAt)],
);

/** A role another user holds on an account or a copier group (docs/people.md); the owner needs no row. */
export const accessGrants = pgTable(
  'access_grants',
  {
    id: text('id').primaryKey(),
    ownerUserId: text('owner_user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** 'account' | 'group' */
    resourceKind: text('resource_kind').notNull(),
    resourceId: text('resource_id').notNull(),
    /** 'owner' | 'trader' | 'read_only' */
    role: text('role').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('access_grants_uq').on(t.userId, t.resourceKind, t.resourceId),
    index('access_grants_resource_idx').on(t.resourceKind, t.resourceId),
  ],
);

/** Recovery codes of the second factor: SHA-256 only, each good once. */
export const recoveryCodes = pgTable(
  'recovery_codes',
  {
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    codeHash: text('code_hash').notNull(),
    usedAt: ts('used_at'),
  },
  (t) => [primaryKey({ name: 'recovery_codes_pk', columns: [t.userId, t.codeHash] })],
);

/** Single-use, expiring tokens (email verification, a sign-in's second step): SHA-256 only. */
export const oneTimeTokens = pgTable(
  'one_time_tokens',
  {
    tokenHash: text('token_hash').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    purpose: text('purpose').notNull(),
    expiresAt: ts('expires_at').notNull(),
    usedAt: ts('used_at'),
    createdAt: createdAt(),
  },
  (t) => [index('one_time_tokens_user_idx').on(t.userId, t.purpose)],
);
