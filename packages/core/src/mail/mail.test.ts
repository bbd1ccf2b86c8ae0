import {
  eventually,
  linkMail,
  logCapture,
  startMailApp,
  startSmtp,
  stopMailApp,
} from '../../../../testing/smtp.js';
import type { MailDelivery } from '../kernel/ports.js';
import { describeEachDatabase, startTestApp, type TestApp } from '../testing/index.js';

const mailOf = (app: TestApp): MailDelivery => app.app.runtime.ports.get('mail');
const LINK = 'https://app.example.com/account/reset-password?token=secret-token-value';

describeEachDatabase('Mail over SMTP (SPEC-2 "Mail and links")', (database) => {
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  let app: TestApp;
  const log = logCapture();
  beforeAll(async () => {
    ({ app, smtp } = await startMailApp(
      database,
      {
        mail_from: 'svc@example.com',
        mfa_enabled: true,
        app_name: 'Notes',
        log_level: 'INFO',
        log_format: 'json',
      },
      { logStream: log.stream },
    ));
  });
  afterAll(async () => {
    await stopMailApp({ app, smtp });
  });

  it('delivers an MFA email code over SMTP when no mfaSender is given, and the code confirms', async () => {
    const user = await app.createUser({ username: 'mailer_mfa', email: 'mfa@example.com' });
    const client = await app.loginAs(user);
    const before = smtp.messages.length;
    expect((await client.post('/api/mfa/email/setup')).status).toBe(200);
    await eventually(() => smtp.messages.length > before);
    const message = smtp.messages.at(-1)!;
    expect(message.envelopeTo).toEqual(['mfa@example.com']);
    expect(message.from?.text).toBe('svc@example.com');
    expect(message.subject).toBe('Your Notes sign-in code');
    const code = /\b(\d{6})\b/.exec(message.text ?? '')?.[1];
    expect(code).toBeDefined();
    expect(message.html).toContain(code);
    const confirmed = await client.post('/api/mfa/email/confirm', { code });
    expect(confirmed.status).toBe(200);
    expect(log.lines.join('\n')).not.toContain(code);
  });

  it('writes the MFA code mail in the language of the user setting', async () => {
    const user = await app.createUser({ username: 'mailer_de', email: 'de@example.com' });
    const client = await app.loginAs(user);
    expect((await client.put('/api/auth/user/settings/preferences/locale', { value: 'de-CH' })).status).toBe(
      200,
    );
    const before = smtp.messages.length;
    await client.post('/api/mfa/email/setup');
    await eventually(() => smtp.messages.length > before);
    expect(smtp.messages.at(-1)!.subject).toBe('Ihr Anmeldecode für Notes');
  });

  it('sends link mails as plain text and HTML with the link in both, in the given language', async () => {
    const before = smtp.messages.length;
    const expiresAt = new Date(Date.now() + 30 * 60_000);
    mailOf(app).passwordReset({
      userId: 'u1',
      email: 'reset@example.com',
      url: LINK,
      expiresAt,
      locale: 'en',
    });
    mailOf(app).invitation({
      userId: 'u2',
      email: 'new@example.com',
      url: `${LINK}&x=<b>`,
      expiresAt,
      locale: 'de',
      invitedBy: 'alice',
    });
    await eventually(() => smtp.messages.length >= before + 2);
    const sent = smtp.messages.slice(before);
    const reset = sent.find((m) => m.envelopeTo[0] === 'reset@example.com');
    const invitation = sent.find((m) => m.envelopeTo[0] === 'new@example.com');
    expect(reset!.subject).toBe('Reset your Notes password');
    expect(reset!.text).toContain(LINK);
    expect(reset!.text).toContain('30 minutes');
    expect(reset!.html).toContain(`href="${LINK.replace(/&/g, '&#38;')}"`);
    expect(invitation!.subject).toBe('alice lädt Sie zu Notes ein');
    // The link is escaped in the HTML part: no markup from a link reaches the mail.
    expect(invitation!.html).not.toContain('<b>');
    expect(invitation!.html).toContain('&#60;b&#62;');
    // Delivery logs nothing of the link.
    expect(log.lines.join('\n')).not.toContain('secret-token-value');
  });

  it('states how long a link or code works in the words a person uses, in en and de', async () => {
    const before = smtp.messages.length;
    const inMinutes = (minutes: number) => new Date(Date.now() + minutes * 60_000);
    const common = { url: LINK, invitedBy: 'alice' };
    // invitation_expire_minutes' default (3 days), a reset of an hour and a half, a verification of a day.
    mailOf(app).invitation({
      ...common,
      userId: 'd1',
      email: 'en-inv@example.com',
      expiresAt: inMinutes(4320),
      locale: 'en',
    });
    mailOf(app).invitation({
      ...common,
      userId: 'd2',
      email: 'de-inv@example.com',
      expiresAt: inMinutes(4320),
      locale: 'de',
    });
    mailOf(app).passwordReset({
      userId: 'd3',
      email: 'en-reset@example.com',
      url: LINK,
      expiresAt: inMinutes(90),
      locale: 'en',
    });
    mailOf(app).passwordReset({
      userId: 'd4',
      email: 'de-reset@example.com',
      url: LINK,
      expiresAt: inMinutes(90),
      locale: 'de',
    });
    mailOf(app).emailVerification({
      userId: 'd5',
      email: 'en-verify@example.com',
      url: LINK,
      expiresAt: inMinutes(1440),
      locale: 'en',
    });
    await eventually(() => smtp.messages.length >= before + 5);
    const text = (to: string) => smtp.messages.slice(before).find((m) => m.envelopeTo[0] === to)!.text;
    expect(text('en-inv@example.com')).toContain('The link works once, for 3 days.');
    expect(text('de-inv@example.com')).toContain('Der Link funktioniert einmal, 3 Tage lang.');
    expect(text('en-reset@example.com')).toContain('The link works once, for 1 hour and 30 minutes.');
    expect(text('de-reset@example.com')).toContain(
      'Der Link funktioniert einmal, 1 Stunde und 30 Minuten lang.',
    );
    expect(text('en-verify@example.com')).toContain('The link works once, for 1 day.');
    for (const message of smtp.messages.slice(before)) expect(message.text).not.toMatch(/\d{3,} min/i);

    // The MFA code mail, in en (mfa_otp_expire_minutes: 10 by default).
    const user = await app.createUser({ username: 'words', email: 'words@example.com' });
    const client = await app.loginAs(user);
    const sent = smtp.messages.length;
    expect((await client.post('/api/mfa/email/setup')).status).toBe(200);
    await eventually(() => smtp.messages.length > sent);
    expect(smtp.messages.at(-1)!.text).toContain('The code works once, for 10 minutes.');
  });
});

describe('Mail without SMTP, with a project mailer, with a failing server', () => {
  const sqlite = { dialect: 'sqlite' as const, label: 'sqlite', url: 'file::memory:' };

  it('logs a warning without the link, and the link only with debug', async () => {
    for (const debug of [false, true]) {
      const log = logCapture();
      const app = await startTestApp({
        database: sqlite,
        logStream: log.stream,
        settings: { log_level: 'INFO', log_format: 'json', debug },
      });
      try {
        mailOf(app).emailVerification(linkMail({ email: 'x@example.com' }));
        await eventually(() => log.lines.some((line) => line.includes('smtp_url is not set')));
        const warning = log.lines.find((line) => line.includes('smtp_url is not set'));
        if (debug) expect(warning).toContain('secret-token-value');
        else expect(log.lines.join('\n')).not.toContain('secret-token-value');
        expect(mailOf(app).smtp).toBe(false);
      } finally {
        await app.close();
      }
    }
  });

  it('hands link mails to the project mailer after the call returns, and logs its failure without the link', async () => {
    const log = logCapture();
    const sent: string[] = [];
    const app = await startTestApp({
      database: sqlite,
      logStream: log.stream,
      settings: { log_level: 'INFO', log_format: 'json' },
      mailer: {
        sendPasswordReset: (m) => void sent.push(`reset:${m.email}:${m.locale}`),
        sendEmailVerification: async () => {
          throw new Error('provider down');
        },
        sendInvitation: (m) => void sent.push(`invite:${m.invitedBy}`),
      },
    });
    try {
      const expiresAt = new Date(Date.now() + 60_000);
      const mail = mailOf(app);
      mail.passwordReset({ userId: 'u1', email: 'a@example.com', url: LINK, expiresAt, locale: 'de' });
      mail.invitation({
        userId: 'u2',
        email: 'b@example.com',
        url: LINK,
        expiresAt,
        locale: 'en',
        invitedBy: 'root',
      });
      mail.emailVerification({ userId: 'u3', email: 'c@example.com', url: LINK, expiresAt, locale: 'en' });
      // Nothing ran in the caller's turn: delivery never delays the answer.
      expect(sent).toEqual([]);
      await eventually(() => sent.length === 2 && log.lines.some((l) => l.includes('mail delivery failed')));
      expect(sent).toEqual(['reset:a@example.com:de', 'invite:root']);
      const failure = log.lines.find((l) => l.includes('mail delivery failed'))!;
      expect(failure).toContain('provider down');
      expect(log.lines.join('\n')).not.toContain('secret-token-value');
    } finally {
      await app.close();
    }
  });

  it('uses a project template in place of the shipped one', async () => {
    const smtp = await startSmtp();
    const app = await startTestApp({
      database: sqlite,
      settings: { smtp_url: smtp.url },
      mailTemplates: {
        passwordReset: (vars, t) => ({
          subject: `[${vars.appName}] ${t('mail.password_reset.action')}`,
          text: `Go to ${vars.url}`,
          html: `<p>Go</p>`,
        }),
      },
    });
    try {
      mailOf(app).passwordReset(linkMail({ locale: 'de' }));
      await eventually(() => smtp.messages.length === 1);
      expect(smtp.messages[0]!.subject).toBe('[svc] Neues Passwort wählen');
      expect(smtp.messages[0]!.text?.trim()).toBe(`Go to ${LINK}`);
    } finally {
      await stopMailApp({ app, smtp });
    }
  });

  it('logs a refusal of the SMTP server without the link and keeps serving', async () => {
    const smtp = await startSmtp({ refuse: true });
    const log = logCapture();
    const app = await startTestApp({
      database: sqlite,
      logStream: log.stream,
      settings: { smtp_url: smtp.url, log_level: 'INFO', log_format: 'json' },
    });
    try {
      mailOf(app).passwordReset(linkMail());
      await eventually(() => log.lines.some((l) => l.includes('mail delivery failed')));
      expect(log.lines.join('\n')).not.toContain('secret-token-value');
      expect((await app.get('/api/health/live')).status).toBe(200);
    } finally {
      await stopMailApp({ app, smtp });
    }
  });
});
