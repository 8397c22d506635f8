-- A fan-out's intents are written, before the first send, into copy_intents_recent: a child of copy_intents
-- (INHERITS) with its primary key only. Every read, update and delete of copy_intents includes the child's rows, so
-- no reader changes and a row is in exactly one of the two tables in any snapshot. Soon after the sends are handed
-- out (and by a sweep, for what a crash left), the rows move to copy_intents proper in one statement (delete from the
-- child returning, insert into the parent), where its secondary indexes (tag, trade, Slave, state) are written:
-- behind the copy instead of ahead of it. At 1000 rows those indexes were more than half the record's time.
-- Columns added to copy_intents later are added to the child by PostgreSQL itself (ALTER TABLE recurses).
CREATE TABLE "copy_intents_recent" () INHERITS ("copy_intents");
--> statement-breakpoint
ALTER TABLE "copy_intents_recent" ADD PRIMARY KEY ("id");
