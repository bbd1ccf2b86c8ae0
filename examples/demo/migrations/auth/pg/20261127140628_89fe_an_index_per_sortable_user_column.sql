-- svc migration revision (edit the SQL freely; keep the header lines and the +svc markers)
-- id: 20261127140628_89fe
-- parent: 20261127073124_9cec
-- message: an index per sortable user column
-- dialect: pg
-- created: 2026-11-27T14:06:28.200Z
-- snapshot: 20261127140628_89fe_an_index_per_sortable_user_column.snapshot.json

-- +svc upgrade
CREATE INDEX "svc_user_first_name_id_idx" ON "svc_user" USING btree ("first_name","id");
--> statement-breakpoint
CREATE INDEX "svc_user_last_name_id_idx" ON "svc_user" USING btree ("last_name","id");
--> statement-breakpoint
CREATE INDEX "svc_user_is_active_id_idx" ON "svc_user" USING btree ("is_active","id");
--> statement-breakpoint
CREATE INDEX "svc_user_is_staff_id_idx" ON "svc_user" USING btree ("is_staff","id");
--> statement-breakpoint
CREATE INDEX "svc_user_is_superuser_id_idx" ON "svc_user" USING btree ("is_superuser","id");
--> statement-breakpoint
CREATE INDEX "svc_user_email_id_idx" ON "svc_user" USING btree ("email","id");
--> statement-breakpoint
CREATE INDEX "svc_user_last_login_at_id_idx" ON "svc_user" USING btree ("last_login_at","id");
--> statement-breakpoint
CREATE INDEX "svc_user_email_desc_id_idx" ON "svc_user" USING btree ("email" DESC NULLS LAST,"id" DESC NULLS FIRST);
--> statement-breakpoint
CREATE INDEX "svc_user_last_login_at_desc_id_idx" ON "svc_user" USING btree ("last_login_at" DESC NULLS LAST,"id" DESC NULLS FIRST);

-- +svc downgrade
DROP INDEX "svc_user_first_name_id_idx";
--> statement-breakpoint
DROP INDEX "svc_user_last_name_id_idx";
--> statement-breakpoint
DROP INDEX "svc_user_is_active_id_idx";
--> statement-breakpoint
DROP INDEX "svc_user_is_staff_id_idx";
--> statement-breakpoint
DROP INDEX "svc_user_is_superuser_id_idx";
--> statement-breakpoint
DROP INDEX "svc_user_email_id_idx";
--> statement-breakpoint
DROP INDEX "svc_user_last_login_at_id_idx";
--> statement-breakpoint
DROP INDEX "svc_user_email_desc_id_idx";
--> statement-breakpoint
DROP INDEX "svc_user_last_login_at_desc_id_idx";
