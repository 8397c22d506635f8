CREATE TABLE "leases" (
	"key" text PRIMARY KEY NOT NULL,
	"owner" text NOT NULL,
	"epoch" bigint NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"acquired_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "leases_owner_idx" ON "leases" USING btree ("owner");