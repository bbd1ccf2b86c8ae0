-- svc migration revision (edit the SQL freely; keep the header lines and the +svc markers)
-- id: 20261127073124_9cec
-- parent: 20261127072753_23e1
-- message: webhooks: endpoints, events, deliveries
-- dialect: sqlite
-- created: 2026-11-27T07:31:24.702Z
-- snapshot: 20261127073124_9cec_webhooks_endpoints_events_deliveries.snapshot.json

-- +svc upgrade
CREATE TABLE `svc_webhook_endpoint` (
	`id` text PRIMARY KEY NOT NULL,
	`url` text(2048) NOT NULL,
	`events` text NOT NULL,
	`description` text(500) DEFAULT '' NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`secret` text NOT NULL,
	`previous_secret` text,
	`previous_secret_expires_at` integer,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `svc_webhook_event` (
	`id` text PRIMARY KEY NOT NULL,
	`type` text(64) NOT NULL,
	`data` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `svc_webhook_event_created_idx` ON `svc_webhook_event` (`created_at`);
--> statement-breakpoint
CREATE TABLE `svc_webhook_delivery` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`event_id` text NOT NULL,
	`endpoint_id` text NOT NULL,
	`status` text(16) NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`last_status_code` integer,
	`last_error` text,
	`next_attempt_at` integer,
	`leased_by` text(64),
	`created_at` integer NOT NULL,
	`delivered_at` integer,
	FOREIGN KEY (`event_id`) REFERENCES `svc_webhook_event`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`endpoint_id`) REFERENCES `svc_webhook_endpoint`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `svc_webhook_delivery_due_idx` ON `svc_webhook_delivery` (`status`,`next_attempt_at`);
--> statement-breakpoint
CREATE INDEX `svc_webhook_delivery_endpoint_idx` ON `svc_webhook_delivery` (`endpoint_id`,`id`);
--> statement-breakpoint
CREATE INDEX `svc_webhook_delivery_event_idx` ON `svc_webhook_delivery` (`event_id`);

-- +svc downgrade
DROP TABLE `svc_webhook_endpoint`;
--> statement-breakpoint
DROP TABLE `svc_webhook_event`;
--> statement-breakpoint
DROP TABLE `svc_webhook_delivery`;
