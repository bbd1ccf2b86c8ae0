-- svc migration revision (edit the SQL freely; keep the header lines and the +svc markers)
-- id: 20261124210224_854d
-- parent: 20261124204654_3944
-- message: account tokens for password reset
-- dialect: pg
-- created: 2026-11-24T21:02:24.180Z
-- snapshot: 20261124210224_854d_account_tokens_for_password_reset.snapshot.json

-- +svc upgrade
CREATE TABLE "svc_account_token" (
	"digest" varchar(64) PRIMARY KEY NOT NULL,
	"purpose" varchar(16) NOT NULL,
	"user_id" uuid NOT NULL,
	"email" varchar(320) NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"used_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "svc_account_token" ADD CONSTRAINT "svc_account_token_user_id_svc_user_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."svc_user"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
CREATE INDEX "svc_account_token_user_purpose_idx" ON "svc_account_token" USING btree ("user_id","purpose");

-- +svc downgrade
DROP TABLE "svc_account_token" CASCADE;
