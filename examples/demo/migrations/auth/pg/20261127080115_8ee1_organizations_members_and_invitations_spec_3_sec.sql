-- svc migration revision (edit the SQL freely; keep the header lines and the +svc markers)
-- id: 20261127080115_8ee1
-- parent: 20261127073924_02ce
-- message: organizations, members and invitations (SPEC-3 section 2)
-- dialect: pg
-- created: 2026-11-27T08:01:15.001Z
-- snapshot: 20261127080115_8ee1_organizations_members_and_invitations_spec_3_sec.snapshot.json

-- +svc upgrade
CREATE TABLE "svc_organization" (
	"id" uuid PRIMARY KEY NOT NULL,
	"slug" varchar(50) NOT NULL,
	"name" varchar(100) NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"member_count" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "svc_organization_slug_unique" UNIQUE("slug")
);
--> statement-breakpoint
CREATE TABLE "svc_organization_member" (
	"organization_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"role" varchar(50) NOT NULL,
	"joined_at" timestamp with time zone NOT NULL,
	CONSTRAINT "svc_organization_member_organization_id_user_id_pk" PRIMARY KEY("organization_id","user_id")
);
--> statement-breakpoint
CREATE TABLE "svc_organization_invitation" (
	"id" uuid PRIMARY KEY NOT NULL,
	"organization_id" uuid NOT NULL,
	"digest" varchar(64) NOT NULL,
	"email" varchar(320) NOT NULL,
	"role" varchar(50) NOT NULL,
	"state" varchar(16) NOT NULL,
	"invited_by" uuid,
	"expires_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"used_at" timestamp with time zone,
	CONSTRAINT "svc_organization_invitation_digest_unique" UNIQUE("digest")
);
--> statement-breakpoint
ALTER TABLE "svc_organization_member" ADD CONSTRAINT "svc_organization_member_organization_id_svc_organization_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."svc_organization"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "svc_organization_member" ADD CONSTRAINT "svc_organization_member_user_id_svc_user_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."svc_user"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "svc_organization_invitation" ADD CONSTRAINT "svc_organization_invitation_organization_id_svc_organization_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."svc_organization"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "svc_organization_invitation" ADD CONSTRAINT "svc_organization_invitation_invited_by_svc_user_id_fk" FOREIGN KEY ("invited_by") REFERENCES "public"."svc_user"("id") ON DELETE set null ON UPDATE no action;
--> statement-breakpoint
CREATE INDEX "svc_organization_created_idx" ON "svc_organization" USING btree ("created_at","id");
--> statement-breakpoint
CREATE INDEX "svc_organization_member_joined_idx" ON "svc_organization_member" USING btree ("organization_id","joined_at","user_id");
--> statement-breakpoint
CREATE INDEX "svc_organization_member_user_idx" ON "svc_organization_member" USING btree ("user_id");
--> statement-breakpoint
CREATE INDEX "svc_organization_invitation_org_idx" ON "svc_organization_invitation" USING btree ("organization_id","state");

-- +svc downgrade
DROP TABLE "svc_organization" CASCADE;
--> statement-breakpoint
DROP TABLE "svc_organization_member" CASCADE;
--> statement-breakpoint
DROP TABLE "svc_organization_invitation" CASCADE;
