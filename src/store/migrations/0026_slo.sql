-- Service levels per Slave (docs/slo.md): a target per copier group, and the breaches in progress (one row per Slave
-- and metric, so a breach that lasts raises one slo.breached event, whichever process evaluates it).
CREATE TABLE "slo_targets" (
	"group_id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"target" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "slo_targets" ADD CONSTRAINT "slo_targets_group_id_copier_groups_id_fk" FOREIGN KEY ("group_id") REFERENCES "public"."copier_groups"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
CREATE TABLE "slo_breaches" (
	"account_id" text NOT NULL,
	"metric" text NOT NULL,
	"group_id" text NOT NULL,
	"user_id" text NOT NULL,
	"value" jsonb NOT NULL,
	"since" timestamp with time zone NOT NULL,
	CONSTRAINT "slo_breaches_pk" PRIMARY KEY("account_id","metric")
);
