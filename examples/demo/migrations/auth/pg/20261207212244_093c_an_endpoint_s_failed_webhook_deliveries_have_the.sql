-- svc migration revision (edit the SQL freely; keep the header lines and the +svc markers)
-- id: 20261207212244_093c
-- parent: 20261128021742_ace0
-- message: an endpoint's failed webhook deliveries have their own index
-- dialect: pg
-- created: 2026-12-07T21:22:44.555Z
-- snapshot: 20261207212244_093c_an_endpoint_s_failed_webhook_deliveries_have_the.snapshot.json

-- +svc upgrade
CREATE INDEX "svc_webhook_delivery_failed_idx" ON "svc_webhook_delivery" USING btree ("endpoint_id","id") WHERE "status" = 'failed';

-- +svc downgrade
DROP INDEX "svc_webhook_delivery_failed_idx";
