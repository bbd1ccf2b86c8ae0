-- svc migration revision (edit the SQL freely; keep the header lines and the +svc markers)
-- id: 20261124201154_b4f4
-- parent: base
-- message: demo notes table
-- dialect: pg
-- created: 2026-11-24T20:11:54.110Z
-- snapshot: 20261124201154_b4f4_demo_notes_table.snapshot.json

-- +svc upgrade
CREATE TABLE "demo_note" (
	"id" serial PRIMARY KEY NOT NULL,
	"text" text NOT NULL,
	"archived" boolean DEFAULT false NOT NULL,
	"author_id" uuid NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);

-- +svc downgrade
DROP TABLE "demo_note" CASCADE;
