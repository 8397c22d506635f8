-- The copy ledger's other tables lose their foreign keys, as copy_intents did (0011): trades (to the user and the
-- Master's account) and master_items (to the account), written by a copy's record before its first send, and
-- position_links (to the Master's and the Slave's account), upserted by every outcome batch. Each key cost every
-- row a lookup and a FOR KEY SHARE lock on the parent: measured on PostgreSQL (server-side statement times, 1000
-- Slaves) the links upsert took 6.5-6.7 ms a batch with them and 3.8 without; the record of a 100-Slave copy
-- 0.92-0.99 ms against 0.78-0.79. Their cascades were never used: users and trades are never deleted, an account's
-- removal is a soft delete (accounts.removed_at) that deletes its links and Master items itself, and no path
-- deletes account rows. The ids these rows carry come from the user and account rows the engine read to plan the
-- copy.
ALTER TABLE "master_items" DROP CONSTRAINT IF EXISTS "master_items_account_id_accounts_id_fk";
--> statement-breakpoint
ALTER TABLE "position_links" DROP CONSTRAINT IF EXISTS "position_links_master_account_id_accounts_id_fk";
--> statement-breakpoint
ALTER TABLE "position_links" DROP CONSTRAINT IF EXISTS "position_links_slave_account_id_accounts_id_fk";
--> statement-breakpoint
ALTER TABLE "trades" DROP CONSTRAINT IF EXISTS "trades_user_id_users_id_fk";
--> statement-breakpoint
ALTER TABLE "trades" DROP CONSTRAINT IF EXISTS "trades_master_account_id_accounts_id_fk";
