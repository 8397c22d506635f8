-- A page of a user's accounts in id order (GET /v1/accounts?limit=..., AccountsRepo.listPage) as one range scan of
-- this index, where the index on user_id alone fetched all of the user's rows and sorted them for every page. It
-- serves every lookup by user_id as the old one did, so the old one goes. Built before the old one is dropped.
CREATE INDEX "accounts_user_id_idx" ON "accounts" USING btree ("user_id","id");--> statement-breakpoint
DROP INDEX "accounts_user_idx";
