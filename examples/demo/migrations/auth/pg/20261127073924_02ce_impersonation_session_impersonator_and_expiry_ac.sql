-- svc migration revision (edit the SQL freely; keep the header lines and the +svc markers)
-- id: 20261127073924_02ce
-- parent: 20261125023758_fe88
-- message: impersonation: session impersonator and expiry, activity impersonator_id
-- dialect: pg
-- created: 2026-11-27T07:39:24.953Z
-- snapshot: 20261127073924_02ce_impersonation_session_impersonator_and_expiry_ac.snapshot.json

-- +svc upgrade
ALTER TABLE "svc_session" ADD COLUMN "impersonator_id" uuid;
--> statement-breakpoint
ALTER TABLE "svc_session" ADD COLUMN "expires_at" timestamp with time zone;
--> statement-breakpoint
ALTER TABLE "svc_activity_log" ADD COLUMN "impersonator_id" uuid;

-- +svc downgrade
ALTER TABLE "svc_session" DROP COLUMN "impersonator_id";
--> statement-breakpoint
ALTER TABLE "svc_session" DROP COLUMN "expires_at";
--> statement-breakpoint
ALTER TABLE "svc_activity_log" DROP COLUMN "impersonator_id";
