ALTER TABLE "accounts" ADD COLUMN "rev" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
-- rev moves on when an update changes any column but those a health round writes (health, balance, equity,
-- updated_at), whoever writes it: the PostgreSQL store's held group rows compare rev, not the row's xmin, which
-- every health round moves. The columns are listed (a jsonb of both rows cost a health slice of 100 rows 3.5 ms
-- more); a column added to accounts must be added here (test/store/group-slaves-postgres.test.ts fails otherwise).
-- Each rev is a new value of a sequence, never an old one plus one: a row deleted and inserted again (raw SQL, a
-- partial restore) or a rev written back by hand would otherwise show the rev held and hide the change.
CREATE SEQUENCE "accounts_rev_seq";--> statement-breakpoint
CREATE FUNCTION "accounts_rev"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW."rev" := nextval('accounts_rev_seq');
  RETURN NEW;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "accounts_rev_insert" BEFORE INSERT ON "accounts" FOR EACH ROW EXECUTE FUNCTION "accounts_rev"();
--> statement-breakpoint
CREATE TRIGGER "accounts_rev" BEFORE UPDATE ON "accounts" FOR EACH ROW
  WHEN ((OLD."rev", OLD."id", OLD."user_id", OLD."platform", OLD."role", OLD."status", OLD."name", OLD."group_id", OLD."broker_account_id", OLD."broker_account_number", OLD."broker_name", OLD."environment", OLD."currency", OLD."credentials_enc", OLD."status_reason", OLD."broker_identity", OLD."removed_at", OLD."created_at") IS DISTINCT FROM (NEW."rev", NEW."id", NEW."user_id", NEW."platform", NEW."role", NEW."status", NEW."name", NEW."group_id", NEW."broker_account_id", NEW."broker_account_number", NEW."broker_name", NEW."environment", NEW."currency", NEW."credentials_enc", NEW."status_reason", NEW."broker_identity", NEW."removed_at", NEW."created_at"))
  EXECUTE FUNCTION "accounts_rev"();
