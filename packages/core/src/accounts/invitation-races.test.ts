import { eq } from 'drizzle-orm';
import { startMailApp, stopMailApp, type TestSmtp } from '../../../../testing/smtp.js';
import { describeEachDatabase, type LoggedInClient, type TestApp } from '../testing/index.js';

const PARALLEL = 20;
const ROUNDS = 5;

/**
 * SPEC-3 §7 rule 9 ("Stable codes under concurrency") for `POST /admin/user/invite`: parallel invitations that
 * meet on the unique username or email answer what SPEC-2 "Invitations" documents, never `db.conflict`.
 */
describeEachDatabase('Concurrent invitations', (database) => {
  let smtp: TestSmtp;
  let app: TestApp;
  let admin: LoggedInClient;

  beforeAll(async () => {
    ({ app, smtp } = await startMailApp(database, { public_url: 'https://app.example.com' }));
    admin = await app.loginAs(await app.createUser({ username: 'race_inviter', isSuperuser: true }));
  });
  afterAll(async () => {
    await stopMailApp({ app, smtp });
  });

  const usersNamed = async (username: string) => {
    const { user } = app.app.runtime.tables.core;
    return app.app.runtime.authDb.orm.select().from(user).where(eq(user.username, username));
  };

  it('one username, many addresses at once: one 201, the others 400 auth.username_taken', async () => {
    // Several rounds: the race (both checks passed, then the unique index refused) is not met every time.
    for (let round = 0; round < ROUNDS; round++) {
      const username = `race_name_${round}`;
      const answers = await Promise.all(
        Array.from({ length: PARALLEL }, (_, i) =>
          admin.post('/api/admin/user/invite', { email: `race-${round}-${i}@example.com`, username }),
        ),
      );
      const statuses = answers.map((res) => res.status).sort();
      expect(statuses).toEqual([201, ...Array<number>(PARALLEL - 1).fill(400)]);
      for (const res of answers.filter((r) => r.status === 400)) {
        expect(res.body.detail[0]).toMatchObject({ code: 'auth.username_taken' });
      }
      expect(await usersNamed(username)).toHaveLength(1);
    }
  });

  it('one address at once: one 201 creates the user, the others renew its pending invitation (200)', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const username = `race_mail_${round}`;
      const answers = await Promise.all(
        Array.from({ length: PARALLEL }, () =>
          admin.post('/api/admin/user/invite', { email: `race-mail-${round}@example.com`, username }),
        ),
      );
      const statuses = answers.map((res) => res.status).sort();
      expect(statuses).toEqual([...Array<number>(PARALLEL - 1).fill(200), 201]);
      const [created] = await usersNamed(username);
      for (const res of answers) expect(res.body.data).toMatchObject({ id: created!.id, username });
    }
  });
});
