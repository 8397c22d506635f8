-- The last connection test of each account (see account_connection_tests in schema.ts); accounts connected before
-- this migration have none, and are treated as tested (they were connected and copying already).
CREATE TABLE "account_connection_tests" (
	"account_id" text PRIMARY KEY NOT NULL,
	"result" jsonb NOT NULL,
	"checked_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "account_connection_tests" ADD CONSTRAINT "account_connection_tests_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;
