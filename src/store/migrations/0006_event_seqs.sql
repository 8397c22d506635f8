CREATE TABLE "event_seqs" (
	"user_id" text NOT NULL,
	"scope" text NOT NULL,
	"last_seq" integer NOT NULL,
	CONSTRAINT "event_seqs_user_id_scope_pk" PRIMARY KEY("user_id","scope")
);
--> statement-breakpoint
INSERT INTO "event_seqs" ("user_id", "scope", "last_seq")
  SELECT "user_id", coalesce("account_id", ''), max("seq") FROM "events" GROUP BY "user_id", coalesce("account_id", '');
