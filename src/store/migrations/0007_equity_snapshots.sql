CREATE TABLE "equity_snapshots" (
	"account_id" text NOT NULL,
	"at" timestamp with time zone NOT NULL,
	"balance" numeric NOT NULL,
	"equity" numeric NOT NULL,
	CONSTRAINT "equity_snapshots_account_id_at_pk" PRIMARY KEY("account_id","at")
);
--> statement-breakpoint
ALTER TABLE "equity_snapshots" ADD CONSTRAINT "equity_snapshots_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "equity_snapshots_at_idx" ON "equity_snapshots" USING btree ("at");