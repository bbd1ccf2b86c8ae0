-- svc migration revision (edit the SQL freely; keep the header lines and the +svc markers)
-- id: 20261122020328_b0cf
-- parent: base
-- message: initial auth schema
-- dialect: sqlite
-- created: 2026-11-22T02:03:28.272Z
-- snapshot: 20261122020328_b0cf_initial_auth_schema.snapshot.json

-- +svc upgrade
CREATE TABLE `svc_user` (
	`id` text PRIMARY KEY NOT NULL,
	`username` text(150) NOT NULL,
	`email` text(320),
	`first_name` text(150) DEFAULT '' NOT NULL,
	`last_name` text(150) DEFAULT '' NOT NULL,
	`password_hash` text(255) NOT NULL,
	`is_active` integer DEFAULT true NOT NULL,
	`is_staff` integer DEFAULT false NOT NULL,
	`is_superuser` integer DEFAULT false NOT NULL,
	`email_verified_at` integer,
	`last_login_at` integer,
	`created_at` integer NOT NULL,
	`password_changed_at` integer,
	`failed_login_count` integer DEFAULT 0 NOT NULL,
	`locked_until` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `svc_user_username_unique` ON `svc_user` (`username`);
--> statement-breakpoint
CREATE UNIQUE INDEX `svc_user_email_unique` ON `svc_user` (`email`);
--> statement-breakpoint
CREATE TABLE `svc_group` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text(150) NOT NULL,
	`description` text(500) DEFAULT '' NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `svc_group_name_unique` ON `svc_group` (`name`);
--> statement-breakpoint
CREATE TABLE `svc_permission` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`codename` text(150) NOT NULL,
	`description` text(500) DEFAULT '' NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `svc_permission_codename_unique` ON `svc_permission` (`codename`);
--> statement-breakpoint
CREATE TABLE `svc_group_permission` (
	`group_id` integer NOT NULL,
	`permission_id` integer NOT NULL,
	PRIMARY KEY(`group_id`, `permission_id`),
	FOREIGN KEY (`group_id`) REFERENCES `svc_group`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`permission_id`) REFERENCES `svc_permission`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `svc_group_permission_permission_idx` ON `svc_group_permission` (`permission_id`);
--> statement-breakpoint
CREATE TABLE `svc_user_group` (
	`user_id` text NOT NULL,
	`group_id` integer NOT NULL,
	PRIMARY KEY(`user_id`, `group_id`),
	FOREIGN KEY (`user_id`) REFERENCES `svc_user`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`group_id`) REFERENCES `svc_group`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `svc_user_group_group_idx` ON `svc_user_group` (`group_id`);
--> statement-breakpoint
CREATE TABLE `svc_user_permission` (
	`user_id` text NOT NULL,
	`permission_id` integer NOT NULL,
	PRIMARY KEY(`user_id`, `permission_id`),
	FOREIGN KEY (`user_id`) REFERENCES `svc_user`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`permission_id`) REFERENCES `svc_permission`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `svc_user_permission_permission_idx` ON `svc_user_permission` (`permission_id`);
--> statement-breakpoint
CREATE TABLE `svc_refresh_token` (
	`jti` text PRIMARY KEY NOT NULL,
	`family` text NOT NULL,
	`user_id` text NOT NULL,
	`expires_at` integer NOT NULL,
	`spent_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `svc_user`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `svc_refresh_token_family_idx` ON `svc_refresh_token` (`family`);
--> statement-breakpoint
CREATE INDEX `svc_refresh_token_user_idx` ON `svc_refresh_token` (`user_id`);
--> statement-breakpoint
CREATE TABLE `svc_user_settings` (
	`user_id` text PRIMARY KEY NOT NULL,
	`data` text NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `svc_user`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `svc_mfa_config` (
	`user_id` text PRIMARY KEY NOT NULL,
	`method` text(16) NOT NULL,
	`is_active` integer DEFAULT false NOT NULL,
	`totp_secret` text(255),
	`last_totp_step` integer,
	`backup_codes` text DEFAULT '[]' NOT NULL,
	`phone_number` text(32),
	`pending_code_hash` text(128),
	`pending_code_expires_at` integer,
	`pending_attempts` integer DEFAULT 0 NOT NULL,
	`last_sent_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `svc_user`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `svc_mfa_pending` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`code_hash` text(128),
	`expires_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `svc_user`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `svc_mfa_pending_user_idx` ON `svc_mfa_pending` (`user_id`);
--> statement-breakpoint
CREATE TABLE `svc_activity_log` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`timestamp` integer NOT NULL,
	`user_id` text,
	`username` text(150),
	`method` text(10) NOT NULL,
	`path` text(500) NOT NULL,
	`status_code` integer NOT NULL,
	`duration_ms` integer NOT NULL,
	`description` text(500)
);
--> statement-breakpoint
CREATE INDEX `svc_activity_log_user_timestamp_idx` ON `svc_activity_log` (`user_id`,`timestamp`);
--> statement-breakpoint
CREATE INDEX `svc_activity_log_timestamp_idx` ON `svc_activity_log` (`timestamp`);
--> statement-breakpoint
CREATE TABLE `svc_ws_ticket` (
	`digest` text(64) PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`expires_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `svc_user`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `svc_ws_ticket_expires_idx` ON `svc_ws_ticket` (`expires_at`);
--> statement-breakpoint
CREATE INDEX `svc_ws_ticket_user_idx` ON `svc_ws_ticket` (`user_id`);

-- +svc downgrade
DROP TABLE `svc_user`;
--> statement-breakpoint
DROP TABLE `svc_group`;
--> statement-breakpoint
DROP TABLE `svc_permission`;
--> statement-breakpoint
DROP TABLE `svc_group_permission`;
--> statement-breakpoint
DROP TABLE `svc_user_group`;
--> statement-breakpoint
DROP TABLE `svc_user_permission`;
--> statement-breakpoint
DROP TABLE `svc_refresh_token`;
--> statement-breakpoint
DROP TABLE `svc_user_settings`;
--> statement-breakpoint
DROP TABLE `svc_mfa_config`;
--> statement-breakpoint
DROP TABLE `svc_mfa_pending`;
--> statement-breakpoint
DROP TABLE `svc_activity_log`;
--> statement-breakpoint
DROP TABLE `svc_ws_ticket`;
