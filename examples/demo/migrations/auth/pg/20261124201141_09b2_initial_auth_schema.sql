-- svc migration revision (edit the SQL freely; keep the header lines and the +svc markers)
-- id: 20261124201141_09b2
-- parent: base
-- message: initial auth schema
-- dialect: pg
-- created: 2026-11-24T20:11:41.738Z
-- snapshot: 20261124201141_09b2_initial_auth_schema.snapshot.json

-- +svc upgrade
CREATE TABLE "svc_user" (
	"id" uuid PRIMARY KEY NOT NULL,
	"username" varchar(150) NOT NULL,
	"email" varchar(320),
	"first_name" varchar(150) DEFAULT '' NOT NULL,
	"last_name" varchar(150) DEFAULT '' NOT NULL,
	"password_hash" varchar(255) NOT NULL,
	"is_active" boolean DEFAULT true NOT NULL,
	"is_staff" boolean DEFAULT false NOT NULL,
	"is_superuser" boolean DEFAULT false NOT NULL,
	"email_verified_at" timestamp with time zone,
	"last_login_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"password_changed_at" timestamp with time zone,
	"failed_login_count" integer DEFAULT 0 NOT NULL,
	"locked_until" timestamp with time zone,
	CONSTRAINT "svc_user_username_unique" UNIQUE("username")
);
--> statement-breakpoint
CREATE TABLE "svc_group" (
	"id" serial PRIMARY KEY NOT NULL,
	"name" varchar(150) NOT NULL,
	"description" varchar(500) DEFAULT '' NOT NULL,
	CONSTRAINT "svc_group_name_unique" UNIQUE("name")
);
--> statement-breakpoint
CREATE TABLE "svc_permission" (
	"id" serial PRIMARY KEY NOT NULL,
	"codename" varchar(150) NOT NULL,
	"description" varchar(500) DEFAULT '' NOT NULL,
	CONSTRAINT "svc_permission_codename_unique" UNIQUE("codename")
);
--> statement-breakpoint
CREATE TABLE "svc_group_permission" (
	"group_id" integer NOT NULL,
	"permission_id" integer NOT NULL,
	CONSTRAINT "svc_group_permission_group_id_permission_id_pk" PRIMARY KEY("group_id","permission_id")
);
--> statement-breakpoint
CREATE TABLE "svc_user_group" (
	"user_id" uuid NOT NULL,
	"group_id" integer NOT NULL,
	CONSTRAINT "svc_user_group_user_id_group_id_pk" PRIMARY KEY("user_id","group_id")
);
--> statement-breakpoint
CREATE TABLE "svc_user_permission" (
	"user_id" uuid NOT NULL,
	"permission_id" integer NOT NULL,
	CONSTRAINT "svc_user_permission_user_id_permission_id_pk" PRIMARY KEY("user_id","permission_id")
);
--> statement-breakpoint
CREATE TABLE "svc_refresh_token" (
	"jti" varchar(64) PRIMARY KEY NOT NULL,
	"family" varchar(64) NOT NULL,
	"user_id" uuid NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"spent_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "svc_user_settings" (
	"user_id" uuid PRIMARY KEY NOT NULL,
	"data" jsonb NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "svc_mfa_config" (
	"user_id" uuid PRIMARY KEY NOT NULL,
	"method" varchar(16) NOT NULL,
	"is_active" boolean DEFAULT false NOT NULL,
	"totp_secret" varchar(255),
	"last_totp_step" bigint,
	"backup_codes" text DEFAULT '[]' NOT NULL,
	"phone_number" varchar(32),
	"pending_code_hash" varchar(128),
	"pending_code_expires_at" timestamp with time zone,
	"pending_attempts" integer DEFAULT 0 NOT NULL,
	"last_sent_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "svc_mfa_pending" (
	"id" varchar(64) PRIMARY KEY NOT NULL,
	"user_id" uuid NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"code_hash" varchar(128),
	"expires_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "svc_activity_log" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"timestamp" timestamp with time zone NOT NULL,
	"user_id" uuid,
	"username" varchar(150),
	"method" varchar(10) NOT NULL,
	"path" varchar(500) NOT NULL,
	"status_code" integer NOT NULL,
	"duration_ms" integer NOT NULL,
	"description" varchar(500)
);
--> statement-breakpoint
CREATE TABLE "svc_ws_ticket" (
	"digest" varchar(64) PRIMARY KEY NOT NULL,
	"user_id" uuid NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "svc_group_permission" ADD CONSTRAINT "svc_group_permission_group_id_svc_group_id_fk" FOREIGN KEY ("group_id") REFERENCES "public"."svc_group"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "svc_group_permission" ADD CONSTRAINT "svc_group_permission_permission_id_svc_permission_id_fk" FOREIGN KEY ("permission_id") REFERENCES "public"."svc_permission"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "svc_user_group" ADD CONSTRAINT "svc_user_group_user_id_svc_user_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."svc_user"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "svc_user_group" ADD CONSTRAINT "svc_user_group_group_id_svc_group_id_fk" FOREIGN KEY ("group_id") REFERENCES "public"."svc_group"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "svc_user_permission" ADD CONSTRAINT "svc_user_permission_user_id_svc_user_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."svc_user"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "svc_user_permission" ADD CONSTRAINT "svc_user_permission_permission_id_svc_permission_id_fk" FOREIGN KEY ("permission_id") REFERENCES "public"."svc_permission"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "svc_refresh_token" ADD CONSTRAINT "svc_refresh_token_user_id_svc_user_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."svc_user"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "svc_user_settings" ADD CONSTRAINT "svc_user_settings_user_id_svc_user_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."svc_user"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "svc_mfa_config" ADD CONSTRAINT "svc_mfa_config_user_id_svc_user_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."svc_user"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "svc_mfa_pending" ADD CONSTRAINT "svc_mfa_pending_user_id_svc_user_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."svc_user"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "svc_ws_ticket" ADD CONSTRAINT "svc_ws_ticket_user_id_svc_user_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."svc_user"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
CREATE UNIQUE INDEX "svc_user_email_lower_unique" ON "svc_user" USING btree (lower("email"));
--> statement-breakpoint
CREATE INDEX "svc_group_permission_permission_idx" ON "svc_group_permission" USING btree ("permission_id");
--> statement-breakpoint
CREATE INDEX "svc_user_group_group_idx" ON "svc_user_group" USING btree ("group_id");
--> statement-breakpoint
CREATE INDEX "svc_user_permission_permission_idx" ON "svc_user_permission" USING btree ("permission_id");
--> statement-breakpoint
CREATE INDEX "svc_refresh_token_family_idx" ON "svc_refresh_token" USING btree ("family");
--> statement-breakpoint
CREATE INDEX "svc_refresh_token_user_idx" ON "svc_refresh_token" USING btree ("user_id");
--> statement-breakpoint
CREATE INDEX "svc_mfa_pending_user_idx" ON "svc_mfa_pending" USING btree ("user_id");
--> statement-breakpoint
CREATE INDEX "svc_activity_log_user_timestamp_idx" ON "svc_activity_log" USING btree ("user_id","timestamp");
--> statement-breakpoint
CREATE INDEX "svc_activity_log_timestamp_idx" ON "svc_activity_log" USING btree ("timestamp");
--> statement-breakpoint
CREATE INDEX "svc_ws_ticket_expires_idx" ON "svc_ws_ticket" USING btree ("expires_at");
--> statement-breakpoint
CREATE INDEX "svc_ws_ticket_user_idx" ON "svc_ws_ticket" USING btree ("user_id");

-- +svc downgrade
DROP TABLE "svc_user" CASCADE;
--> statement-breakpoint
DROP TABLE "svc_group" CASCADE;
--> statement-breakpoint
DROP TABLE "svc_permission" CASCADE;
--> statement-breakpoint
DROP TABLE "svc_group_permission" CASCADE;
--> statement-breakpoint
DROP TABLE "svc_user_group" CASCADE;
--> statement-breakpoint
DROP TABLE "svc_user_permission" CASCADE;
--> statement-breakpoint
DROP TABLE "svc_refresh_token" CASCADE;
--> statement-breakpoint
DROP TABLE "svc_user_settings" CASCADE;
--> statement-breakpoint
DROP TABLE "svc_mfa_config" CASCADE;
--> statement-breakpoint
DROP TABLE "svc_mfa_pending" CASCADE;
--> statement-breakpoint
DROP TABLE "svc_activity_log" CASCADE;
--> statement-breakpoint
DROP TABLE "svc_ws_ticket" CASCADE;
