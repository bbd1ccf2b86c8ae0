import { describeEachDatabase, startTestApp, type TestApp } from '../testing/index.js';

const PARALLEL = 12;

/**
 * SPEC-3 §7 rule 9 ("Stable codes under concurrency"): registrations and email changes that meet on the
 * unique username or email answer their documented codes (SPEC "Errors"), never `db.conflict`.
 */
describeEachDatabase('Unique conflicts under concurrency', (database) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ database, settings: { registration_enabled: true } });
  });
  afterAll(() => app.close());

  it('parallel registrations of one username: one 201, the others 400 auth.username_taken', async () => {
    for (let round = 0; round < 3; round++) {
      const username = `race_reg_${round}`;
      const answers = await Promise.all(
        Array.from({ length: PARALLEL }, (_, i) =>
          app.post('/api/auth/register', {
            username,
            password: 'a-long-enough-passphrase',
            email: `reg-${round}-${i}@example.com`,
          }),
        ),
      );
      expect(answers.map((res) => res.status).sort()).toEqual([
        201,
        ...Array<number>(PARALLEL - 1).fill(400),
      ]);
      for (const res of answers.filter((r) => r.status === 400)) {
        expect(res.body.detail[0]).toMatchObject({ code: 'auth.username_taken' });
      }
    }
  });

  it('parallel email changes to one address: one 200, the others 400 user.email_exists', async () => {
    const clients = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        const user = await app.createUser({ username: `race_mail_${i}` });
        return { user, client: await app.loginAs(user) };
      }),
    );
    const answers = await Promise.all(
      clients.map(({ user, client }) =>
        client.patch('/api/auth/user', { email: 'wanted@example.com', currentPassword: user.password }),
      ),
    );
    expect(answers.map((res) => res.status).sort()).toEqual([200, 400, 400, 400, 400, 400]);
    for (const res of answers.filter((r) => r.status === 400)) {
      expect(res.body.detail[0]).toMatchObject({ code: 'user.email_exists' });
    }
  });
});
