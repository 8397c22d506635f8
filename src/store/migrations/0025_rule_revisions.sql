-- Rule revisions (docs/what-if.md): every change of a copy rule or of risk limits is a numbered revision of its
-- target (a Slave account: its copy rule and its own risk limits; a copier group: its risk limits), with who, when,
-- the whole state after the change and the fields it changed. The copy rule's JSON carries the Slave's current
-- revision (`revision`), so the planner names it on every ledger row it writes (copy_intents.rule_revision).
CREATE TABLE "rule_revisions" (
	"target_id" text NOT NULL,
	"seq" integer NOT NULL,
	"scope" text NOT NULL,
	"user_id" text NOT NULL,
	"actor" text NOT NULL,
	"source" text NOT NULL,
	"snapshot" jsonb NOT NULL,
	"diff" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "rule_revisions_pk" PRIMARY KEY("target_id","seq")
);
--> statement-breakpoint
CREATE INDEX "rule_revisions_user_idx" ON "rule_revisions" USING btree ("user_id");
--> statement-breakpoint
-- ALTER TABLE recurses into copy_intents_recent (migration 0013). Null on rows planned before this migration.
ALTER TABLE "copy_intents" ADD COLUMN "rule_revision" integer;
--> statement-breakpoint
-- What was in place before revisions existed becomes revision 1 of its target, so a rollback can return to it.
INSERT INTO "rule_revisions" ("target_id", "seq", "scope", "user_id", "actor", "source", "snapshot", "diff")
SELECT a."id", 1, 'account', a."user_id", 'migration', 'migration',
  jsonb_build_object('rule', cr."rule", 'riskLimits', rl."limits"), '[]'::jsonb
FROM "accounts" a
LEFT JOIN "copy_rules" cr ON cr."slave_account_id" = a."id"
LEFT JOIN "risk_limits" rl ON rl."target_id" = a."id"
WHERE cr."slave_account_id" IS NOT NULL OR rl."target_id" IS NOT NULL;
--> statement-breakpoint
INSERT INTO "rule_revisions" ("target_id", "seq", "scope", "user_id", "actor", "source", "snapshot", "diff")
SELECT rl."target_id", 1, 'group', rl."user_id", 'migration', 'migration',
  jsonb_build_object('riskLimits', rl."limits"), '[]'::jsonb
FROM "risk_limits" rl WHERE rl."scope" = 'group';
--> statement-breakpoint
UPDATE "copy_rules" SET "rule" = "rule" || '{"revision":1}'::jsonb;
