-- svc migration revision (edit the SQL freely; keep the header lines and the +svc markers)
-- id: 20261124210224_854d
-- parent: 20261124204654_3944
-- message: account tokens for password reset
-- dialect: sqlite
-- created: 2026-11-24T21:02:24.180Z
-- snapshot: 20261124210224_854d_account_tokens_for_password_reset.snapshot.json

-- +svc upgrade
CREATE TABLE `svc_account_token` (
	`digest` text(64) PRIMARY KEY NOT NULL,
	`purpose` text(16) NOT NULL,
	`user_id` text NOT NULL,
	`email` text(320) NOT NULL,
	`expires_at` integer NOT NULL,
	`used_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `svc_user`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `svc_account_token_user_purpose_idx` ON `svc_account_token` (`user_id`,`purpose`);

-- +svc downgrade
DROP TABLE `svc_account_token`;
