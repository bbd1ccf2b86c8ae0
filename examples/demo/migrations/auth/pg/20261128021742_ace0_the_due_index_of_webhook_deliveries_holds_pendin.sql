-- svc migration revision (edit the SQL freely; keep the header lines and the +svc markers)
-- id: 20261128021742_ace0
-- parent: 20261127140628_89fe
-- message: the due index of webhook deliveries holds pending ones only
-- dialect: pg
-- created: 2026-11-28T02:17:42.274Z
-- snapshot: 20261128021742_ace0_the_due_index_of_webhook_deliveries_holds_pendin.snapshot.json

-- +svc upgrade
DROP INDEX "svc_webhook_delivery_due_idx";
--> statement-breakpoint
CREATE INDEX "svc_webhook_delivery_due_idx" ON "svc_webhook_delivery" USING btree ("next_attempt_at") WHERE "status" = 'pending';

-- +svc downgrade
DROP INDEX "svc_webhook_delivery_due_idx";
--> statement-breakpoint
CREATE INDEX "svc_webhook_delivery_due_idx" ON "svc_webhook_delivery" USING btree ("status","next_attempt_at");
