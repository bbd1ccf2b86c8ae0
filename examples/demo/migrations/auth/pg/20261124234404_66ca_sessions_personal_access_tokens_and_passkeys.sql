-- svc migration revision (edit the SQL freely; keep the header lines and the +svc markers)
-- id: 20261124234404_66ca
-- parent: 20261124210224_854d
-- message: sessions, personal access tokens and passkeys
-- dialect: pg
-- created: 2026-11-24T23:44:04.542Z
-- snapshot: 20261124234404_66ca_sessions_personal_access_tokens_and_passkeys.snapshot.json

-- +svc upgrade
CREATE TABLE "svc_session" (
	"id" uuid PRIMARY KEY NOT NULL,
	"user_id" uuid NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"last_used_at" timestamp with time zone NOT NULL,
	"user_agent" varchar(255) DEFAULT '' NOT NULL,
	"ip" varchar(64) DEFAULT '' NOT NULL,
	"revoked_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "svc_personal_token" (
	"id" uuid PRIMARY KEY NOT NULL,
	"user_id" uuid NOT NULL,
	"digest" varchar(64) NOT NULL,
	"name" varchar(100) NOT NULL,
	"prefix" varchar(12) NOT NULL,
	"permissions" text DEFAULT '[]' NOT NULL,
	"staff" boolean DEFAULT false NOT NULL,
	"superuser" boolean DEFAULT false NOT NULL,
	"expires_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"last_used_at" timestamp with time zone,
	CONSTRAINT "svc_personal_token_digest_unique" UNIQUE("digest")
);
--> statement-breakpoint
CREATE TABLE "svc_passkey" (
	"id" uuid PRIMARY KEY NOT NULL,
	"user_id" uuid NOT NULL,
	"credential_id" varchar(1364) NOT NULL,
	"public_key" text NOT NULL,
	"counter" bigint DEFAULT 0 NOT NULL,
	"transports" text DEFAULT '[]' NOT NULL,
	"name" varchar(100) NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"last_used_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "svc_ws_ticket" ADD COLUMN "session_id" uuid;
--> statement-breakpoint
ALTER TABLE "svc_session" ADD CONSTRAINT "svc_session_user_id_svc_user_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."svc_user"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "svc_personal_token" ADD CONSTRAINT "svc_personal_token_user_id_svc_user_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."svc_user"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "svc_passkey" ADD CONSTRAINT "svc_passkey_user_id_svc_user_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."svc_user"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
CREATE INDEX "svc_session_user_idx" ON "svc_session" USING btree ("user_id");
--> statement-breakpoint
CREATE INDEX "svc_session_last_used_idx" ON "svc_session" USING btree ("last_used_at");
--> statement-breakpoint
CREATE INDEX "svc_personal_token_user_idx" ON "svc_personal_token" USING btree ("user_id");
--> statement-breakpoint
CREATE UNIQUE INDEX "svc_passkey_credential_idx" ON "svc_passkey" USING btree ("credential_id");
--> statement-breakpoint
CREATE INDEX "svc_passkey_user_idx" ON "svc_passkey" USING btree ("user_id");

-- +svc downgrade
DROP TABLE "svc_session" CASCADE;
--> statement-breakpoint
DROP TABLE "svc_personal_token" CASCADE;
--> statement-breakpoint
DROP TABLE "svc_passkey" CASCADE;
--> statement-breakpoint
ALTER TABLE "svc_ws_ticket" DROP COLUMN "session_id";
