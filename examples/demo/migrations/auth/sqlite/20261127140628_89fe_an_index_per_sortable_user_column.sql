-- svc migration revision (edit the SQL freely; keep the header lines and the +svc markers)
-- id: 20261127140628_89fe
-- parent: 20261127073124_9cec
-- message: an index per sortable user column
-- dialect: sqlite
-- created: 2026-11-27T14:06:28.200Z
-- snapshot: 20261127140628_89fe_an_index_per_sortable_user_column.snapshot.json

-- +svc upgrade
CREATE INDEX `svc_user_first_name_id_idx` ON `svc_user` (`first_name`,`id`);
--> statement-breakpoint
CREATE INDEX `svc_user_last_name_id_idx` ON `svc_user` (`last_name`,`id`);
--> statement-breakpoint
CREATE INDEX `svc_user_is_active_id_idx` ON `svc_user` (`is_active`,`id`);
--> statement-breakpoint
CREATE INDEX `svc_user_is_staff_id_idx` ON `svc_user` (`is_staff`,`id`);
--> statement-breakpoint
CREATE INDEX `svc_user_is_superuser_id_idx` ON `svc_user` (`is_superuser`,`id`);
--> statement-breakpoint
CREATE INDEX `svc_user_email_id_idx` ON `svc_user` (`email`,`id`);
--> statement-breakpoint
CREATE INDEX `svc_user_last_login_at_id_idx` ON `svc_user` (`last_login_at`,`id`);

-- +svc downgrade
DROP INDEX `svc_user_first_name_id_idx`;
--> statement-breakpoint
DROP INDEX `svc_user_last_name_id_idx`;
--> statement-breakpoint
DROP INDEX `svc_user_is_active_id_idx`;
--> statement-breakpoint
DROP INDEX `svc_user_is_staff_id_idx`;
--> statement-breakpoint
DROP INDEX `svc_user_is_superuser_id_idx`;
--> statement-breakpoint
DROP INDEX `svc_user_email_id_idx`;
--> statement-breakpoint
DROP INDEX `svc_user_last_login_at_id_idx`;
