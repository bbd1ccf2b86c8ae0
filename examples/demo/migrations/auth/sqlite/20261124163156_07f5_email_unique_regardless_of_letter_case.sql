-- svc migration revision (edit the SQL freely; keep the header lines and the +svc markers)
-- id: 20261124163156_07f5
-- parent: 20261122020328_b0cf
-- message: email unique regardless of letter case
-- dialect: sqlite
-- created: 2026-11-24T16:31:56.824Z
-- snapshot: 20261124163156_07f5_email_unique_regardless_of_letter_case.snapshot.json

-- +svc upgrade
DROP INDEX `svc_user_email_unique`;
--> statement-breakpoint
CREATE UNIQUE INDEX `svc_user_email_lower_unique` ON `svc_user` (lower("email"));

-- +svc downgrade
DROP INDEX `svc_user_email_lower_unique`;
--> statement-breakpoint
CREATE UNIQUE INDEX `svc_user_email_unique` ON `svc_user` (`email`);
