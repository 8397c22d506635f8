ALTER TABLE "accounts" ADD COLUMN "broker_identity" text;--> statement-breakpoint
-- The same strings as domain/broker-identity.ts. Platform A's server is only in the sealed credentials: the
-- service fills those rows on start (store/identity-backfill.ts), with the same oldest-wins rule.
UPDATE "accounts" SET "broker_identity" = CASE "platform"
  WHEN 'sim' THEN 'sim:' || btrim("broker_account_id")
  WHEN 'platformb' THEN 'platformb:' || coalesce(nullif(lower(regexp_replace(regexp_replace(coalesce("environment", ''), '^\s+|\s+$', '', 'g'), '\s+', ' ', 'g')), ''), 'demo')
    || ':' || lower(regexp_replace(regexp_replace(coalesce("broker_name", ''), '^\s+|\s+$', '', 'g'), '\s+', ' ', 'g')) || ':' || btrim("broker_account_id")
  WHEN 'platformc' THEN 'platformc:' || coalesce(nullif(lower(regexp_replace(regexp_replace(coalesce("environment", ''), '^\s+|\s+$', '', 'g'), '\s+', ' ', 'g')), ''), 'demo')
    || ':' || btrim("broker_account_id")
  ELSE NULL END;--> statement-breakpoint
-- Existing duplicates must not stop the upgrade: the oldest connection keeps the identity, later ones are
-- disabled (no copying to or from them) with the reason, and lose the identity so the unique index holds.
UPDATE "accounts" AS a SET
  "status" = 'disabled',
  "status_reason" = CASE WHEN d."keep_user" = a."user_id"
    THEN 'duplicate connection: this broker account is already connected as ' || d."keep_id"
    ELSE 'duplicate connection: this broker account is already connected by another user' END,
  "broker_identity" = NULL,
  "updated_at" = now()
FROM (
  SELECT "id",
    first_value("id") OVER w AS "keep_id",
    first_value("user_id") OVER w AS "keep_user"
  FROM "accounts" WHERE "broker_identity" IS NOT NULL
  WINDOW w AS (PARTITION BY "broker_identity" ORDER BY "created_at", "id")
) AS d
WHERE a."id" = d."id" AND d."id" <> d."keep_id";--> statement-breakpoint
CREATE UNIQUE INDEX "accounts_broker_identity_uq" ON "accounts" USING btree ("broker_identity");
