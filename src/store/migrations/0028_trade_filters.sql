-- Copy rule filters on the Master's trade (docs/copy-rules.md): its magic number and comment, where its platform
-- carries them, are kept with the trade so that the what-if preview replays a magic or comment filter as the
-- planner applied it. Null on trades recorded before this migration and on platforms without them.
ALTER TABLE "trades" ADD COLUMN "master_magic" bigint;
--> statement-breakpoint
ALTER TABLE "trades" ADD COLUMN "master_comment" text;
