-- svc migration revision (edit the SQL freely; keep the header lines and the +svc markers)
-- id: 20261127080115_8ee1
-- parent: 20261127073924_02ce
-- message: organizations, members and invitations (SPEC-3 section 2)
-- dialect: sqlite
-- created: 2026-11-27T08:01:15.001Z
-- snapshot: 20261127080115_8ee1_organizations_members_and_invitations_spec_3_sec.snapshot.json

-- +svc upgrade
CREATE TABLE `svc_organization` (
	`id` text PRIMARY KEY NOT NULL,
	`slug` text(50) NOT NULL,
	`name` text(100) NOT NULL,
	`created_at` integer NOT NULL,
	`member_count` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `svc_organization_slug_unique` ON `svc_organization` (`slug`);
--> statement-breakpoint
CREATE INDEX `svc_organization_created_idx` ON `svc_organization` (`created_at`,`id`);
--> statement-breakpoint
CREATE TABLE `svc_organization_member` (
	`organization_id` text NOT NULL,
	`user_id` text NOT NULL,
	`role` text(50) NOT NULL,
	`joined_at` integer NOT NULL,
	PRIMARY KEY(`organization_id`, `user_id`),
	FOREIGN KEY (`organization_id`) REFERENCES `svc_organization`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `svc_user`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `svc_organization_member_joined_idx` ON `svc_organization_member` (`organization_id`,`joined_at`,`user_id`);
--> statement-breakpoint
CREATE INDEX `svc_organization_member_user_idx` ON `svc_organization_member` (`user_id`);
--> statement-breakpoint
CREATE TABLE `svc_organization_invitation` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`digest` text(64) NOT NULL,
	`email` text(320) NOT NULL,
	`role` text(50) NOT NULL,
	`state` text(16) NOT NULL,
	`invited_by` text,
	`expires_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	`used_at` integer,
	FOREIGN KEY (`organization_id`) REFERENCES `svc_organization`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`invited_by`) REFERENCES `svc_user`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `svc_organization_invitation_digest_unique` ON `svc_organization_invitation` (`digest`);
--> statement-breakpoint
CREATE INDEX `svc_organization_invitation_org_idx` ON `svc_organization_invitation` (`organization_id`,`state`);

-- +svc downgrade
DROP TABLE `svc_organization`;
--> statement-breakpoint
DROP TABLE `svc_organization_member`;
--> statement-breakpoint
DROP TABLE `svc_organization_invitation`;
