-- svc migration revision (edit the SQL freely; keep the header lines and the +svc markers)
-- id: 20261122020330_b1fa
-- parent: base
-- message: demo notes table
-- dialect: sqlite
-- created: 2026-11-22T02:03:30.467Z
-- snapshot: 20261122020330_b1fa_demo_notes_table.snapshot.json

-- +svc upgrade
CREATE TABLE `demo_note` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`text` text NOT NULL,
	`archived` integer DEFAULT false NOT NULL,
	`author_id` text NOT NULL,
	`created_at` integer NOT NULL
);

-- +svc downgrade
DROP TABLE `demo_note`;
