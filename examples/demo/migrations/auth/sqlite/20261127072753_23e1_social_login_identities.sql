-- svc migration revision (edit the SQL freely; keep the header lines and the +svc markers)
-- id: 20261127072753_23e1
-- parent: 20261127080115_8ee1
-- message: social login identities
-- dialect: sqlite
-- created: 2026-11-27T07:27:53.662Z
-- snapshot: 20261127072753_23e1_social_login_identities.snapshot.json

-- +svc upgrade
CREATE TABLE `svc_user_identity` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`provider` text(64) NOT NULL,
	`issuer` text(512) NOT NULL,
	`subject` text(255) NOT NULL,
	`email` text(320),
	`created_at` integer NOT NULL,
	`last_used_at` integer,
	FOREIGN KEY (`user_id`) REFERENCES `svc_user`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `svc_user_identity_issuer_subject_idx` ON `svc_user_identity` (`issuer`,`subject`);
--> statement-breakpoint
CREATE INDEX `svc_user_identity_user_idx` ON `svc_user_identity` (`user_id`);

-- +svc downgrade
DROP TABLE `svc_user_identity`;
