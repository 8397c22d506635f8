DROP INDEX "accounts_broker_uq";--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "removed_at" timestamp with time zone;--> statement-breakpoint
CREATE UNIQUE INDEX "accounts_broker_uq" ON "accounts" USING btree ("user_id","platform","broker_account_id","environment") WHERE "accounts"."removed_at" is null;