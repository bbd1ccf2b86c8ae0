import { eq } from 'drizzle-orm';
import { Secret, TOTP } from 'otpauth';
import type { CoreTables } from '../packages/core/src/kernel/db/tables.js';
import type { TestApp, TestClient, TestResponse } from '../packages/core/src/testing/test-app.js';
import type { EmailCodeMessage, MfaSender, SmsCodeMessage } from '../packages/core/src/mfa/sender.js';
import type { MfaTables } from '../packages/core/src/mfa/tables.js';

/** An `mfaSender` that keeps what it was given, for tests. */
export function capturingSender(): MfaSender & { email: EmailCodeMessage[]; sms: SmsCodeMessage[] } {
  const email: EmailCodeMessage[] = [];
  const sms: SmsCodeMessage[] = [];
  return {
    email,
    sms,
    async sendEmailCode(message) {
      email.push(message);
    },
    async sendSmsCode(message) {
      sms.push(message);
    },
  };
}

/** Waits until `predicate` holds (background delivery), at most two seconds. */
export async function eventually(predicate: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !predicate(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!predicate()) throw new Error('condition not reached in time');
}

/** The code of a base32 secret `offsetSteps` steps from now (otpauth's `generate({ timestamp })`). */
export function totpCode(secret: string, offsetSteps = 0): string {
  const totp = new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' });
  return totp.generate({ timestamp: Date.now() + offsetSteps * 30_000 });
}

/** Avoids flaky step boundaries: waits when within two seconds of the next 30-second step. */
export async function awayFromStepBoundary(): Promise<void> {
  const intoStep = Date.now() % 30_000;
  if (intoStep > 28_000) await new Promise((r) => setTimeout(r, 30_000 - intoStep + 100));
}

/** The tables and query builder of a running test app. */
export function dbOf(app: TestApp) {
  const rt = app.app.runtime;
  return {
    orm: rt.authDb.orm,
    mfa: rt.tables.mfa as unknown as MfaTables,
    core: rt.tables.core as unknown as CoreTables,
  };
}

export async function configRow(app: TestApp, userId: string) {
  const { orm, mfa } = dbOf(app);
  const [row] = await orm.select().from(mfa.mfaConfig).where(eq(mfa.mfaConfig.userId, userId));
  return row;
}

export async function challengeRows(app: TestApp, userId: string) {
  const { orm, mfa } = dbOf(app);
  return orm.select().from(mfa.mfaPending).where(eq(mfa.mfaPending.userId, userId));
}

export async function failedLoginCount(app: TestApp, userId: string): Promise<number> {
  const { orm, core } = dbOf(app);
  const [row] = await orm
    .select({ count: core.user.failedLoginCount })
    .from(core.user)
    .where(eq(core.user.id, userId));
  return row!.count;
}

/** `POST /api/auth/token` (form); the body whatever its shape. */
export function passwordLogin(
  app: TestApp,
  user: { username: string; password: string },
): Promise<TestResponse> {
  return app.post('/api/auth/token', undefined, {
    form: { username: user.username, password: user.password },
  });
}

/** Logs in a user with MFA active and returns the `mfa_token`. */
export async function mfaToken(app: TestApp, user: { username: string; password: string }): Promise<string> {
  const res = await passwordLogin(app, user);
  if (res.status !== 200 || res.body?.mfa_required !== true) {
    throw new Error(`expected an MFA challenge: ${res.status} ${res.text}`);
  }
  return res.body.mfa_token as string;
}

/**
 * Enrols TOTP over HTTP (setup + confirm); returns the secret and the backup codes. Any server with a way to log
 * in will do (a `startTestApp` app, or a `svc serve` process logged into with `createClient`).
 */
export async function enrolTotp(
  app: { loginAs(user: { username: string; password: string }): Promise<Pick<TestClient, 'post'>> },
  user: { username: string; password: string },
): Promise<{ secret: string; backupCodes: string[]; confirmCode: string }> {
  const client = await app.loginAs(user);
  const setup = await client.post('/api/mfa/totp/setup');
  if (setup.status !== 200) throw new Error(`setup failed: ${setup.status} ${setup.text}`);
  const { secret, backup_codes: backupCodes } = setup.body.data as { secret: string; backup_codes: string[] };
  await awayFromStepBoundary();
  const confirmCode = totpCode(secret);
  const confirm = await client.post('/api/mfa/totp/confirm', { code: confirmCode });
  if (confirm.status !== 200) throw new Error(`confirm failed: ${confirm.status} ${confirm.text}`);
  return { secret, backupCodes, confirmCode };
}
