CREATE UNLOGGED TABLE "rate_buckets" (
	"bucket" text PRIMARY KEY NOT NULL,
	"tokens" double precision NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sign_in_failures" (
	"subject" text PRIMARY KEY NOT NULL,
	"failures" integer NOT NULL,
	"last_failure_at" timestamp with time zone NOT NULL,
	"blocked_until" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "rate_limit_writes" integer;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "rate_limit_reads" integer;--> statement-breakpoint
ALTER TABLE "idempotency_keys" ADD COLUMN "request_id" text;--> statement-breakpoint
ALTER TABLE "idempotency_keys" ADD COLUMN "claimed_by" text;--> statement-breakpoint
CREATE INDEX "idempotency_keys_in_flight_idx" ON "idempotency_keys" USING btree ("created_at") WHERE "idempotency_keys"."status" is null;