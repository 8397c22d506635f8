CREATE TABLE "access_tokens" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"token_hash" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone,
	"last_used_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "accounts" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"platform" text NOT NULL,
	"role" text NOT NULL,
	"status" text NOT NULL,
	"name" text NOT NULL,
	"group_id" text,
	"broker_account_id" text NOT NULL,
	"broker_account_number" text NOT NULL,
	"broker_name" text,
	"environment" text,
	"currency" text,
	"credentials_enc" text,
	"health" jsonb NOT NULL,
	"balance" numeric,
	"equity" numeric,
	"status_reason" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"name" text NOT NULL,
	"display_prefix" text NOT NULL,
	"key_hash" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	"last_used_at" timestamp with time zone,
	"replaced_by" text
);
--> statement-breakpoint
CREATE TABLE "copier_groups" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "copy_intents" (
	"id" text PRIMARY KEY NOT NULL,
	"trade_id" text NOT NULL,
	"slave_account_id" text NOT NULL,
	"tag" text NOT NULL,
	"action" text NOT NULL,
	"symbol" text NOT NULL,
	"side" text NOT NULL,
	"planned_volume" numeric,
	"planned_price" numeric,
	"stop_loss" numeric,
	"take_profit" numeric,
	"state" text NOT NULL,
	"skip_reason" text,
	"outcome" jsonb,
	"broker_order_id" text,
	"broker_position_id" text,
	"filled_volume" numeric,
	"fill_price" numeric,
	"slippage" numeric,
	"latency" jsonb,
	"attempts" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "copy_rules" (
	"slave_account_id" text PRIMARY KEY NOT NULL,
	"rule" jsonb NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "position_links" (
	"id" text PRIMARY KEY NOT NULL,
	"master_account_id" text NOT NULL,
	"master_position_id" text NOT NULL,
	"slave_account_id" text NOT NULL,
	"slave_position_id" text NOT NULL,
	"intent_id" text,
	"open" boolean DEFAULT true NOT NULL,
	"closed_reason" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"closed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "rate_limit_hits" (
	"id" text PRIMARY KEY NOT NULL,
	"bucket" text NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "request_records" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text,
	"credential_kind" text,
	"credential_id" text,
	"method" text NOT NULL,
	"route" text NOT NULL,
	"path" text NOT NULL,
	"status" integer NOT NULL,
	"body_digest" text,
	"response" jsonb,
	"duration_ms" numeric,
	"idempotency_key" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "trades" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"master_account_id" text NOT NULL,
	"group_id" text,
	"source" text NOT NULL,
	"action" text NOT NULL,
	"symbol" text NOT NULL,
	"side" text NOT NULL,
	"order_type" text NOT NULL,
	"volume" numeric NOT NULL,
	"price" numeric,
	"stop_loss" numeric,
	"take_profit" numeric,
	"tag" text NOT NULL,
	"status" text NOT NULL,
	"master_outcome" jsonb,
	"master_position_id" text,
	"master_order_id" text,
	"fill_price" numeric,
	"request_id" text,
	"copied_to" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" text PRIMARY KEY NOT NULL,
	"email" text NOT NULL,
	"password_hash" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "access_tokens" ADD CONSTRAINT "access_tokens_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "accounts" ADD CONSTRAINT "accounts_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "accounts" ADD CONSTRAINT "accounts_group_id_copier_groups_id_fk" FOREIGN KEY ("group_id") REFERENCES "public"."copier_groups"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "copier_groups" ADD CONSTRAINT "copier_groups_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "copy_intents" ADD CONSTRAINT "copy_intents_trade_id_trades_id_fk" FOREIGN KEY ("trade_id") REFERENCES "public"."trades"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "copy_intents" ADD CONSTRAINT "copy_intents_slave_account_id_accounts_id_fk" FOREIGN KEY ("slave_account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "copy_rules" ADD CONSTRAINT "copy_rules_slave_account_id_accounts_id_fk" FOREIGN KEY ("slave_account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "position_links" ADD CONSTRAINT "position_links_master_account_id_accounts_id_fk" FOREIGN KEY ("master_account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "position_links" ADD CONSTRAINT "position_links_slave_account_id_accounts_id_fk" FOREIGN KEY ("slave_account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trades" ADD CONSTRAINT "trades_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trades" ADD CONSTRAINT "trades_master_account_id_accounts_id_fk" FOREIGN KEY ("master_account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "access_tokens_hash_uq" ON "access_tokens" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "access_tokens_user_idx" ON "access_tokens" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "accounts_user_idx" ON "accounts" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "accounts_group_idx" ON "accounts" USING btree ("group_id");--> statement-breakpoint
CREATE UNIQUE INDEX "accounts_broker_uq" ON "accounts" USING btree ("user_id","platform","broker_account_id","environment");--> statement-breakpoint
CREATE UNIQUE INDEX "api_keys_hash_uq" ON "api_keys" USING btree ("key_hash");--> statement-breakpoint
CREATE INDEX "api_keys_user_idx" ON "api_keys" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "copier_groups_user_idx" ON "copier_groups" USING btree ("user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "copy_intents_tag_uq" ON "copy_intents" USING btree ("tag");--> statement-breakpoint
CREATE INDEX "copy_intents_trade_idx" ON "copy_intents" USING btree ("trade_id");--> statement-breakpoint
CREATE INDEX "copy_intents_slave_idx" ON "copy_intents" USING btree ("slave_account_id","created_at");--> statement-breakpoint
CREATE INDEX "copy_intents_state_idx" ON "copy_intents" USING btree ("state");--> statement-breakpoint
CREATE INDEX "position_links_master_idx" ON "position_links" USING btree ("master_account_id","master_position_id");--> statement-breakpoint
CREATE UNIQUE INDEX "position_links_slave_uq" ON "position_links" USING btree ("slave_account_id","slave_position_id");--> statement-breakpoint
CREATE INDEX "rate_limit_hits_bucket_idx" ON "rate_limit_hits" USING btree ("bucket","at");--> statement-breakpoint
CREATE INDEX "request_records_user_idx" ON "request_records" USING btree ("user_id","created_at");--> statement-breakpoint
CREATE INDEX "trades_user_idx" ON "trades" USING btree ("user_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "trades_tag_uq" ON "trades" USING btree ("tag");--> statement-breakpoint
CREATE UNIQUE INDEX "users_email_uq" ON "users" USING btree (lower("email"));