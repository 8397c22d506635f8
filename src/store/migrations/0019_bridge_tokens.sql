-- Terminal bridge tokens (issue 47): what an EA in the user's own MetaTrader terminal sends to connect one account.
-- Only the SHA-256 of a token is stored; it is shown once. A rotation sets expires_at on the old one (overlap).
CREATE TABLE "bridge_tokens" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"hash" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone,
	"revoked_at" timestamp with time zone
);
--> statement-breakpoint
CREATE UNIQUE INDEX "bridge_tokens_hash_idx" ON "bridge_tokens" USING btree ("hash");
--> statement-breakpoint
CREATE INDEX "bridge_tokens_account_idx" ON "bridge_tokens" USING btree ("account_id");
