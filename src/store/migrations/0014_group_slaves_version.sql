-- Two versions per copier group, moved by committed writes that can change what `slavesOfGroup` answers for it.
-- `version` moves on every write of an account row that is or was a Slave of the group (any column: health rounds
-- too) and of a rule of an account of the group; `settled` only on those that change more than what a health round
-- writes (health, balance, equity, updated_at): an account's `rev` moved (migration 0012), an account inserted or
-- deleted, a rule written. The PostgreSQL store's held group rows are checked against them first: one row by its
-- key instead of hashing every Slave's row and rule (1000 Slaves: 3-7 ms a copy); when only `version` moved, only
-- the rows a round rewrote are fetched, without the digest of every row and rule. Statement-level triggers: a
-- health slice of 100 rows moves its group once.
-- Each version is a new value of a sequence, never the old one plus one: a row deleted and inserted again (a partial
-- restore) must not show a value held before. A group deleted leaves its row (a key and two numbers).
CREATE SEQUENCE "group_slaves_version_seq";--> statement-breakpoint
CREATE TABLE "group_slaves_version" (
  "group_id" text PRIMARY KEY NOT NULL,
  "version" bigint NOT NULL,
  "settled" bigint
);
--> statement-breakpoint
-- Each moves the groups its statement touched, once each and in key order: two transactions moving the same
-- groups take their row locks in the same order. A statement takes its account rows before the group's row, so a
-- transaction of several statements writes an account row before a rule of its group (AccountsRepo.remove), never
-- after: a health slice holding the account row and waiting for the group's row would otherwise deadlock with it.
-- The update's function, which every health slice runs, is written out: through a shared function taking an array
-- of groups, a slice of 100 rows cost 2-3 ms more instead of about 1 ms. The five others run on rare writes
-- (accounts added or removed, rules) and are written the same way so that one reading covers all six.
CREATE FUNCTION "accounts_group_moved_ins"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "group_slaves_version" ("group_id", "version", "settled")
    SELECT g, nextval('group_slaves_version_seq'), nextval('group_slaves_version_seq') FROM (
      SELECT DISTINCT "group_id" AS g FROM new_rows WHERE "role" = 'slave') s
    WHERE g IS NOT NULL ORDER BY g
  ON CONFLICT ("group_id") DO UPDATE
    SET "version" = excluded."version", "settled" = coalesce(excluded."settled", "group_slaves_version"."settled");
  RETURN NULL;
END
$$;
--> statement-breakpoint
-- Settled when a row came out of the statement with an id and rev that did not go in, or went in and did not come
-- out: its rev moved (any column but the round's), or its id did.
CREATE FUNCTION "accounts_group_moved_upd"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "group_slaves_version" ("group_id", "version", "settled")
    SELECT g, nextval('group_slaves_version_seq'), CASE WHEN moved THEN nextval('group_slaves_version_seq') END FROM (
      SELECT g, bool_or(moved) AS moved FROM (
        SELECT n."group_id" AS g, NOT EXISTS (SELECT FROM old_rows o WHERE o."id" = n."id" AND o."rev" = n."rev") AS moved
          FROM new_rows n WHERE n."role" = 'slave'
        UNION ALL
        SELECT o."group_id", NOT EXISTS (SELECT FROM new_rows n WHERE n."id" = o."id" AND n."rev" = o."rev")
          FROM old_rows o WHERE o."role" = 'slave'
      ) r GROUP BY g) s
    WHERE g IS NOT NULL ORDER BY g
  ON CONFLICT ("group_id") DO UPDATE
    SET "version" = excluded."version", "settled" = coalesce(excluded."settled", "group_slaves_version"."settled");
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE FUNCTION "accounts_group_moved_del"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "group_slaves_version" ("group_id", "version", "settled")
    SELECT g, nextval('group_slaves_version_seq'), nextval('group_slaves_version_seq') FROM (
      SELECT DISTINCT "group_id" AS g FROM old_rows WHERE "role" = 'slave') s
    WHERE g IS NOT NULL ORDER BY g
  ON CONFLICT ("group_id") DO UPDATE
    SET "version" = excluded."version", "settled" = coalesce(excluded."settled", "group_slaves_version"."settled");
  RETURN NULL;
END
$$;
--> statement-breakpoint
-- A rule belongs to a Slave's account: its group as the account is now (an account deleted moved its group itself).
CREATE FUNCTION "copy_rules_group_moved_ins"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "group_slaves_version" ("group_id", "version", "settled")
    SELECT g, nextval('group_slaves_version_seq'), nextval('group_slaves_version_seq') FROM (
      SELECT DISTINCT a."group_id" AS g FROM new_rows r JOIN "accounts" a ON a."id" = r."slave_account_id") s
    WHERE g IS NOT NULL ORDER BY g
  ON CONFLICT ("group_id") DO UPDATE
    SET "version" = excluded."version", "settled" = coalesce(excluded."settled", "group_slaves_version"."settled");
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE FUNCTION "copy_rules_group_moved_upd"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "group_slaves_version" ("group_id", "version", "settled")
    SELECT g, nextval('group_slaves_version_seq'), nextval('group_slaves_version_seq') FROM (
      SELECT a."group_id" AS g FROM new_rows r JOIN "accounts" a ON a."id" = r."slave_account_id"
      UNION SELECT a."group_id" AS g FROM old_rows r JOIN "accounts" a ON a."id" = r."slave_account_id") s
    WHERE g IS NOT NULL ORDER BY g
  ON CONFLICT ("group_id") DO UPDATE
    SET "version" = excluded."version", "settled" = coalesce(excluded."settled", "group_slaves_version"."settled");
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE FUNCTION "copy_rules_group_moved_del"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "group_slaves_version" ("group_id", "version", "settled")
    SELECT g, nextval('group_slaves_version_seq'), nextval('group_slaves_version_seq') FROM (
      SELECT DISTINCT a."group_id" AS g FROM old_rows r JOIN "accounts" a ON a."id" = r."slave_account_id") s
    WHERE g IS NOT NULL ORDER BY g
  ON CONFLICT ("group_id") DO UPDATE
    SET "version" = excluded."version", "settled" = coalesce(excluded."settled", "group_slaves_version"."settled");
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "accounts_group_moved_ins" AFTER INSERT ON "accounts" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "accounts_group_moved_ins"();
--> statement-breakpoint
CREATE TRIGGER "accounts_group_moved_upd" AFTER UPDATE ON "accounts" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "accounts_group_moved_upd"();
--> statement-breakpoint
CREATE TRIGGER "accounts_group_moved_del" AFTER DELETE ON "accounts" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "accounts_group_moved_del"();
--> statement-breakpoint
CREATE TRIGGER "copy_rules_group_moved_ins" AFTER INSERT ON "copy_rules" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "copy_rules_group_moved_ins"();
--> statement-breakpoint
CREATE TRIGGER "copy_rules_group_moved_upd" AFTER UPDATE ON "copy_rules" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "copy_rules_group_moved_upd"();
--> statement-breakpoint
CREATE TRIGGER "copy_rules_group_moved_del" AFTER DELETE ON "copy_rules" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "copy_rules_group_moved_del"();
