-- Per Master, how far its broker's deal history has been replayed (see master_cursors in schema.ts).
CREATE TABLE "master_cursors" (
	"account_id" text PRIMARY KEY NOT NULL,
	"deals_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
-- Masters that exist at the upgrade start replaying from now: what happened before it was watched as it was then.
INSERT INTO "master_cursors" ("account_id", "deals_at")
  SELECT "id", now() FROM "accounts" WHERE "role" = 'master' AND "removed_at" IS NULL;
