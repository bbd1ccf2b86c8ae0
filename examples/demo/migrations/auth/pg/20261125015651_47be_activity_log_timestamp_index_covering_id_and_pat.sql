-- svc migration revision (edit the SQL freely; keep the header lines and the +svc markers)
-- id: 20261125015651_47be
-- parent: 20261124234404_66ca
-- message: activity log timestamp index covering id and path on PostgreSQL
-- dialect: pg
-- created: 2026-11-25T01:56:51.707Z
-- snapshot: 20261125015651_47be_activity_log_timestamp_index_covering_id_and_pat.snapshot.json

-- +svc upgrade
CREATE INDEX "svc_activity_log_timestamp_id_path_idx" ON "svc_activity_log" USING btree ("timestamp","id","path");
--> statement-breakpoint
DROP INDEX "svc_activity_log_timestamp_idx";

-- +svc downgrade
DROP INDEX "svc_activity_log_timestamp_id_path_idx";
--> statement-breakpoint
CREATE INDEX "svc_activity_log_timestamp_idx" ON "svc_activity_log" USING btree ("timestamp");
