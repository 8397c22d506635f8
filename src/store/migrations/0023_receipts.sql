-- Receipts that can be verified (docs/receipts.md). The sizing inputs of a copy are written with its ledger row at
-- plan time (null for rows the sizing did not decide: follow-ups, refusals, rows recorded before this migration).
-- ALTER TABLE recurses into copy_intents_recent (migration 0013).
ALTER TABLE "copy_intents" ADD COLUMN "sizing_inputs" jsonb;
--> statement-breakpoint
-- One row per Slave account: the chain's last sequence number and hash. The sealer locks it (FOR UPDATE) while it
-- appends, so two processes never fork a chain.
CREATE TABLE "receipt_chains" (
	"account_id" text PRIMARY KEY NOT NULL,
	"seq" integer NOT NULL,
	"hash" text NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
-- One receipt per ended ledger row; `body` is the canonical JSON text hashed (kept as text: its bytes are the proof).
CREATE TABLE "receipts" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"user_id" text NOT NULL,
	"seq" integer NOT NULL,
	"intent_id" text NOT NULL,
	"day" text NOT NULL,
	"prev_hash" text NOT NULL,
	"hash" text NOT NULL,
	"body" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "receipts_account_seq_uq" ON "receipts" USING btree ("account_id","seq");
--> statement-breakpoint
CREATE UNIQUE INDEX "receipts_intent_uq" ON "receipts" USING btree ("intent_id");
--> statement-breakpoint
CREATE INDEX "receipts_account_day_idx" ON "receipts" USING btree ("account_id","day");
--> statement-breakpoint
-- The signed head of each account's chain per UTC day: the last receipt of that day, signed with the deployment's key.
CREATE TABLE "receipt_heads" (
	"account_id" text NOT NULL,
	"day" text NOT NULL,
	"seq" integer NOT NULL,
	"hash" text NOT NULL,
	"key_id" text NOT NULL,
	"signature" text NOT NULL,
	"signed_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "receipt_heads_pk" PRIMARY KEY("account_id","day")
);
