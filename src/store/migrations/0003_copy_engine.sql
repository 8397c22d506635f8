CREATE TABLE "master_items" (
	"account_id" text NOT NULL,
	"kind" text NOT NULL,
	"item_id" text NOT NULL,
	"symbol" text NOT NULL,
	"side" text NOT NULL,
	"order_type" text NOT NULL,
	"volume" numeric NOT NULL,
	"price" numeric,
	"stop_loss" numeric,
	"take_profit" numeric,
	"tag" text,
	"open" boolean DEFAULT true NOT NULL,
	"seq" integer DEFAULT 0 NOT NULL,
	"origin_trade_id" text,
	"opened_at" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "master_items_account_id_kind_item_id_pk" PRIMARY KEY("account_id","kind","item_id")
);
--> statement-breakpoint
DROP INDEX "position_links_slave_uq";--> statement-breakpoint
ALTER TABLE "copy_intents" ADD COLUMN "target_id" text;--> statement-breakpoint
ALTER TABLE "copy_intents" ADD COLUMN "prev_tags" jsonb;--> statement-breakpoint
ALTER TABLE "position_links" ADD COLUMN "kind" text DEFAULT 'position' NOT NULL;--> statement-breakpoint
ALTER TABLE "position_links" ADD COLUMN "volume" numeric;--> statement-breakpoint
ALTER TABLE "trades" ADD COLUMN "action_id" text;--> statement-breakpoint
ALTER TABLE "trades" ADD COLUMN "action_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "master_items" ADD CONSTRAINT "master_items_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "master_items_open_idx" ON "master_items" USING btree ("account_id","open");--> statement-breakpoint
CREATE UNIQUE INDEX "position_links_slave_kind_uq" ON "position_links" USING btree ("slave_account_id","kind","slave_position_id");--> statement-breakpoint
CREATE UNIQUE INDEX "trades_action_uq" ON "trades" USING btree ("action_id");--> statement-breakpoint
CREATE INDEX "trades_master_pos_idx" ON "trades" USING btree ("master_account_id","master_position_id");