-- svc migration revision (edit the SQL freely; keep the header lines and the +svc markers)
-- id: 20261127073124_9cec
-- parent: 20261127072753_23e1
-- message: webhooks: endpoints, events, deliveries
-- dialect: pg
-- created: 2026-11-27T07:31:24.702Z
-- snapshot: 20261127073124_9cec_webhooks_endpoints_events_deliveries.snapshot.json

-- +svc upgrade
CREATE TABLE "svc_webhook_endpoint" (
	"id" uuid PRIMARY KEY NOT NULL,
	"url" varchar(2048) NOT NULL,
	"events" text NOT NULL,
	"description" varchar(500) DEFAULT '' NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"secret" text NOT NULL,
	"previous_secret" text,
	"previous_secret_expires_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "svc_webhook_event" (
	"id" uuid PRIMARY KEY NOT NULL,
	"type" varchar(64) NOT NULL,
	"data" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "svc_webhook_delivery" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"event_id" uuid NOT NULL,
	"endpoint_id" uuid NOT NULL,
	"status" varchar(16) NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_status_code" integer,
	"last_error" text,
	"next_attempt_at" timestamp with time zone,
	"leased_by" varchar(64),
	"created_at" timestamp with time zone NOT NULL,
	"delivered_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "svc_webhook_delivery" ADD CONSTRAINT "svc_webhook_delivery_event_id_svc_webhook_event_id_fk" FOREIGN KEY ("event_id") REFERENCES "public"."svc_webhook_event"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "svc_webhook_delivery" ADD CONSTRAINT "svc_webhook_delivery_endpoint_id_svc_webhook_endpoint_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."svc_webhook_endpoint"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
CREATE INDEX "svc_webhook_event_created_idx" ON "svc_webhook_event" USING btree ("created_at");
--> statement-breakpoint
CREATE INDEX "svc_webhook_delivery_due_idx" ON "svc_webhook_delivery" USING btree ("status","next_attempt_at");
--> statement-breakpoint
CREATE INDEX "svc_webhook_delivery_endpoint_idx" ON "svc_webhook_delivery" USING btree ("endpoint_id","id");
--> statement-breakpoint
CREATE INDEX "svc_webhook_delivery_event_idx" ON "svc_webhook_delivery" USING btree ("event_id");

-- +svc downgrade
DROP TABLE "svc_webhook_endpoint" CASCADE;
--> statement-breakpoint
DROP TABLE "svc_webhook_event" CASCADE;
--> statement-breakpoint
DROP TABLE "svc_webhook_delivery" CASCADE;
