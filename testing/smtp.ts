import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import type { AccountMail } from '../packages/core/src/kernel/ports.js';
import {
  startTestApp,
  type StartTestAppOptions,
  type TestApp,
} from '../packages/core/src/testing/test-app.js';
import type { TestDatabase } from '../packages/core/src/testing/each.js';

/** A real SMTP server on loopback that keeps every message it accepts, parsed. */
export async function startSmtp(options: { refuse?: boolean } = {}) {
  const messages: (ParsedMail & { envelopeTo: string[] })[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      if (options.refuse) {
        stream.resume();
        stream.on('end', () =>
          callback(Object.assign(new Error('mailbox unavailable'), { responseCode: 550 })),
        );
        return;
      }
      simpleParser(stream)
        .then((parsed) => {
          messages.push(Object.assign(parsed, { envelopeTo: session.envelope.rcptTo.map((r) => r.address) }));
          callback();
        })
        .catch(callback);
    },
  });
  server.listen(0, '127.0.0.1');
  await once(server.server, 'listening');
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Log lines of the app, as written. */
export function logCapture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { stream, lines };
}

export async function eventually(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export type TestSmtp = Awaited<ReturnType<typeof startSmtp>>;

/**
 * A test app whose mail goes to a real SMTP server on loopback (`smtp_url` set to it), and that server; close
 * both with {@link stopMailApp}.
 */
export async function startMailApp(
  database: TestDatabase,
  settings: StartTestAppOptions['settings'] = {},
  options: Omit<StartTestAppOptions, 'database' | 'settings'> = {},
): Promise<{ app: TestApp; smtp: TestSmtp }> {
  const smtp = await startSmtp();
  const app = await startTestApp({ database, ...options, settings: { smtp_url: smtp.url, ...settings } });
  return { app, smtp };
}

export async function stopMailApp(started: { app?: TestApp; smtp?: TestSmtp }): Promise<void> {
  await started.app?.close();
  await started.smtp?.close();
}

/** The link mail a test hands to the mail port: one user, a link carrying a recognisable secret. */
export function linkMail(overrides: Partial<AccountMail> = {}): AccountMail {
  return {
    userId: 'u1',
    email: 'a@example.com',
    url: 'https://app.example.com/account/reset-password?token=secret-token-value',
    expiresAt: new Date(Date.now() + 60_000),
    locale: 'en',
    ...overrides,
  };
}
