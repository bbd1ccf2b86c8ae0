-- svc migration revision (edit the SQL freely; keep the header lines and the +svc markers)
-- id: 20261124234404_66ca
-- parent: 20261124210224_854d
-- message: sessions, personal access tokens and passkeys
-- dialect: sqlite
-- created: 2026-11-24T23:44:04.542Z
-- snapshot: 20261124234404_66ca_sessions_personal_access_tokens_and_passkeys.snapshot.json

-- +svc upgrade
CREATE TABLE `svc_session` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`created_at` integer NOT NULL,
	`last_used_at` integer NOT NULL,
	`user_agent` text(255) DEFAULT '' NOT NULL,
	`ip` text(64) DEFAULT '' NOT NULL,
	`revoked_at` integer,
	FOREIGN KEY (`user_id`) REFERENCES `svc_user`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `svc_session_user_idx` ON `svc_session` (`user_id`);
--> statement-breakpoint
CREATE INDEX `svc_session_last_used_idx` ON `svc_session` (`last_used_at`);
--> statement-breakpoint
CREATE TABLE `svc_personal_token` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`digest` text(64) NOT NULL,
	`name` text(100) NOT NULL,
	`prefix` text(12) NOT NULL,
	`permissions` text DEFAULT '[]' NOT NULL,
	`staff` integer DEFAULT false NOT NULL,
	`superuser` integer DEFAULT false NOT NULL,
	`expires_at` integer,
	`created_at` integer NOT NULL,
	`last_used_at` integer,
	FOREIGN KEY (`user_id`) REFERENCES `svc_user`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `svc_personal_token_digest_unique` ON `svc_personal_token` (`digest`);
--> statement-breakpoint
CREATE INDEX `svc_personal_token_user_idx` ON `svc_personal_token` (`user_id`);
--> statement-breakpoint
CREATE TABLE `svc_passkey` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`credential_id` text(1364) NOT NULL,
	`public_key` text NOT NULL,
	`counter` integer DEFAULT 0 NOT NULL,
	`transports` text DEFAULT '[]' NOT NULL,
	`name` text(100) NOT NULL,
	`created_at` integer NOT NULL,
	`last_used_at` integer,
	FOREIGN KEY (`user_id`) REFERENCES `svc_user`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `svc_passkey_credential_idx` ON `svc_passkey` (`credential_id`);
--> statement-breakpoint
CREATE INDEX `svc_passkey_user_idx` ON `svc_passkey` (`user_id`);
--> statement-breakpoint
ALTER TABLE `svc_ws_ticket` ADD `session_id` text;

-- +svc downgrade
DROP TABLE `svc_session`;
--> statement-breakpoint
DROP TABLE `svc_personal_token`;
--> statement-breakpoint
DROP TABLE `svc_passkey`;
--> statement-breakpoint
ALTER TABLE `svc_ws_ticket` DROP COLUMN `session_id`;
