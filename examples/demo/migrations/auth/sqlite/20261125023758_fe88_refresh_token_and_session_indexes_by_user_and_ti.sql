-- svc migration revision (edit the SQL freely; keep the header lines and the +svc markers)
-- id: 20261125023758_fe88
-- parent: 20261124234404_66ca
-- message: refresh token and session indexes by user and time
-- dialect: sqlite
-- created: 2026-11-25T02:37:58.081Z
-- snapshot: 20261125023758_fe88_refresh_token_and_session_indexes_by_user_and_ti.snapshot.json

-- +svc upgrade
DROP INDEX `svc_refresh_token_user_idx`;
--> statement-breakpoint
CREATE INDEX `svc_refresh_token_user_expires_idx` ON `svc_refresh_token` (`user_id`,`expires_at`);
--> statement-breakpoint
DROP INDEX `svc_session_user_idx`;
--> statement-breakpoint
CREATE INDEX `svc_session_user_last_used_idx` ON `svc_session` (`user_id`,`last_used_at`);

-- +svc downgrade
DROP INDEX `svc_refresh_token_user_expires_idx`;
--> statement-breakpoint
CREATE INDEX `svc_refresh_token_user_idx` ON `svc_refresh_token` (`user_id`);
--> statement-breakpoint
DROP INDEX `svc_session_user_last_used_idx`;
--> statement-breakpoint
CREATE INDEX `svc_session_user_idx` ON `svc_session` (`user_id`);
