-- svc migration revision (edit the SQL freely; keep the header lines and the +svc markers)
-- id: 20261127072753_23e1
-- parent: 20261127080115_8ee1
-- message: social login identities
-- dialect: pg
-- created: 2026-11-27T07:27:53.662Z
-- snapshot: 20261127072753_23e1_social_login_identities.snapshot.json

-- +svc upgrade
CREATE TABLE "svc_user_identity" (
	"id" uuid PRIMARY KEY NOT NULL,
	"user_id" uuid NOT NULL,
	"provider" varchar(64) NOT NULL,
	"issuer" varchar(512) NOT NULL,
	"subject" varchar(255) NOT NULL,
	"email" varchar(320),
	"created_at" timestamp with time zone NOT NULL,
	"last_used_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "svc_user_identity" ADD CONSTRAINT "svc_user_identity_user_id_svc_user_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."svc_user"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
CREATE UNIQUE INDEX "svc_user_identity_issuer_subject_idx" ON "svc_user_identity" USING btree ("issuer","subject");
--> statement-breakpoint
CREATE INDEX "svc_user_identity_user_idx" ON "svc_user_identity" USING btree ("user_id");

-- +svc downgrade
DROP TABLE "svc_user_identity" CASCADE;
