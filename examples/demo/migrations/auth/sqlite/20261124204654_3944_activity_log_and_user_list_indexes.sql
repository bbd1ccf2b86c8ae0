-- svc migration revision (edit the SQL freely; keep the header lines and the +svc markers)
-- id: 20261124204654_3944
-- parent: 20261124163156_07f5
-- message: activity log and user list indexes
-- dialect: sqlite
-- created: 2026-11-24T20:46:54.412Z
-- snapshot: 20261124204654_3944_activity_log_and_user_list_indexes.snapshot.json

-- +svc upgrade
CREATE INDEX `svc_user_created_at_idx` ON `svc_user` (`created_at`);
--> statement-breakpoint
CREATE INDEX `svc_activity_log_username_timestamp_idx` ON `svc_activity_log` (`username`,`timestamp`);
--> statement-breakpoint
CREATE INDEX `svc_activity_log_method_timestamp_idx` ON `svc_activity_log` (`method`,`timestamp`);
--> statement-breakpoint
CREATE INDEX `svc_activity_log_path_timestamp_idx` ON `svc_activity_log` (`path`,`timestamp`);
--> statement-breakpoint
CREATE INDEX `svc_activity_log_status_code_timestamp_idx` ON `svc_activity_log` (`status_code`,`timestamp`);
--> statement-breakpoint
CREATE INDEX `svc_activity_log_duration_ms_timestamp_idx` ON `svc_activity_log` (`duration_ms`,`timestamp`);

-- +svc downgrade
DROP INDEX `svc_user_created_at_idx`;
--> statement-breakpoint
DROP INDEX `svc_activity_log_username_timestamp_idx`;
--> statement-breakpoint
DROP INDEX `svc_activity_log_method_timestamp_idx`;
--> statement-breakpoint
DROP INDEX `svc_activity_log_path_timestamp_idx`;
--> statement-breakpoint
DROP INDEX `svc_activity_log_status_code_timestamp_idx`;
--> statement-breakpoint
DROP INDEX `svc_activity_log_duration_ms_timestamp_idx`;
