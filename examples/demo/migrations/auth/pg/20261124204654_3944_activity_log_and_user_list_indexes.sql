-- svc migration revision (edit the SQL freely; keep the header lines and the +svc markers)
-- id: 20261124204654_3944
-- parent: 20261124201141_09b2
-- message: activity log and user list indexes
-- dialect: pg
-- created: 2026-11-24T20:46:54.412Z
-- snapshot: 20261124204654_3944_activity_log_and_user_list_indexes.snapshot.json

-- +svc upgrade
CREATE INDEX "svc_user_created_at_idx" ON "svc_user" USING btree ("created_at");
--> statement-breakpoint
CREATE INDEX "svc_activity_log_username_timestamp_idx" ON "svc_activity_log" USING btree ("username","timestamp");
--> statement-breakpoint
CREATE INDEX "svc_activity_log_method_timestamp_idx" ON "svc_activity_log" USING btree ("method","timestamp");
--> statement-breakpoint
CREATE INDEX "svc_activity_log_path_timestamp_idx" ON "svc_activity_log" USING btree ("path","timestamp");
--> statement-breakpoint
CREATE INDEX "svc_activity_log_status_code_timestamp_idx" ON "svc_activity_log" USING btree ("status_code","timestamp");
--> statement-breakpoint
CREATE INDEX "svc_activity_log_duration_ms_timestamp_idx" ON "svc_activity_log" USING btree ("duration_ms","timestamp");

-- +svc downgrade
DROP INDEX "svc_user_created_at_idx";
--> statement-breakpoint
DROP INDEX "svc_activity_log_username_timestamp_idx";
--> statement-breakpoint
DROP INDEX "svc_activity_log_method_timestamp_idx";
--> statement-breakpoint
DROP INDEX "svc_activity_log_path_timestamp_idx";
--> statement-breakpoint
DROP INDEX "svc_activity_log_status_code_timestamp_idx";
--> statement-breakpoint
DROP INDEX "svc_activity_log_duration_ms_timestamp_idx";
