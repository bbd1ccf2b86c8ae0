import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeEachDatabase, startTestApp, TEST_SECRET_KEY, type TestApp } from '@svc/core/testing';
import { runCli, type CliResult } from '../../../../testing/cli-process.js';
import { eventually } from '../../../../testing/smtp.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../../../testing/webhook-receiver.js';

const CLI_TIMEOUT_MS = 120_000;

/** SPEC-3 §3: `svc webhooks list|create|deliveries|redeliver` on a running server's database. */
describeEachDatabase('svc webhooks', (database) => {
  let dir: string;
  let app: TestApp;
  let receiver: WebhookReceiver;
  const webhooks = (args: string[]): Promise<CliResult> => runCli(['--base-dir', dir, 'webhooks', ...args]);

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    const settings = { webhooks_enabled: true, webhooks_allow_private_targets: true };
    app = await startTestApp({ database, settings });
    dir = mkdtempSync(join(tmpdir(), 'svc-cli-webhooks-'));
    writeFileSync(
      join(dir, '.env'),
      [
        `SVC_SECRET_KEY=${TEST_SECRET_KEY}`,
        `SVC_AUTH_DATABASE_URL=${database.url}`,
        'SVC_WEBHOOKS_ENABLED=true',
        'SVC_WEBHOOKS_ALLOW_PRIVATE_TARGETS=true',
        'SVC_LOG_LEVEL=ERROR',
        '',
      ].join('\n'),
    );
  }, CLI_TIMEOUT_MS);
  afterAll(async () => {
    await app.close();
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    'creates an endpoint the server delivers to, lists its deliveries and redelivers one with the same webhook-id',
    async () => {
      const refused = await webhooks(['create', 'ftp://example.com/x']);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('(webhook.url_invalid)');

      const created = await webhooks(['create', receiver.url('/cli'), '-e', 'user.deleted']);
      expect(created.code).toBe(0);
      const id = /created webhook ([0-9a-f-]{36})/.exec(created.stdout)![1]!;
      expect(created.stdout).toMatch(/secret: whsec_/);

      const admin = await app.loginAs(await app.createUser({ username: 'cli_admin', isSuperuser: true }));
      const doomed = await app.createUser({ username: 'cli_doomed' });
      expect((await admin.delete(`/api/admin/user/${doomed.id}`)).status).toBe(204);
      await eventually(() => receiver.at('/cli').length === 1);

      const listed = await webhooks(['deliveries', id]);
      expect(listed.code).toBe(0);
      const deliveryId = /^(\d+)\s+user\.deleted\s+/m.exec(listed.stdout)?.[1];
      expect(deliveryId).toBeDefined();

      const again = await webhooks(['redeliver', id, deliveryId!]);
      expect(again.code).toBe(0);
      await eventually(() => receiver.at('/cli').length === 2);
      const [first, second] = receiver.at('/cli');
      expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    },
    CLI_TIMEOUT_MS,
  );
});
