ALTER TABLE "copy_intents" DROP CONSTRAINT "copy_intents_trade_id_trades_id_fk";
--> statement-breakpoint
ALTER TABLE "copy_intents" DROP CONSTRAINT "copy_intents_slave_account_id_accounts_id_fk";
