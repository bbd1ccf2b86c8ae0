import { eq } from 'drizzle-orm';
import type { CoreTables } from '../kernel/db/tables.js';
import { describeEachDatabase, startTestApp, type LoggedInClient, type TestApp } from '../testing/index.js';
import { defineSettingsSection } from './define.js';

const URL_ = '/api/auth/user/settings';

const notifications = defineSettingsSection({
  name: 'notifications',
  title: 'Notifications',
  icon: 'bell',
  route: '/settings/notifications',
  fields: {
    emailDigest: {
      type: 'enum',
      values: ['off', 'daily', 'weekly'],
      default: 'daily',
      label: 'Email digest',
    },
    max_items: { type: 'integer', ge: 1, le: 50, default: 10 },
    ratio: { type: 'float', gt: 0, lt: 1, default: 0.5 },
    signature: { type: 'string', nullable: true },
  },
});

const DEFAULTS = {
  appearance: { theme: 'auto', accent: 'teal', density: 'comf', fontScale: 'md', reduceMotion: false },
  preferences: { locale: null, timezone: null, dateFormat: 'auto', tablePageSize: 25 },
  audit: { disableActivityLog: false },
  notifications: { emailDigest: 'daily', maxItems: 10, ratio: 0.5, signature: null },
};

describeEachDatabase('user settings routes', (database) => {
  let app: TestApp;
  let alice: LoggedInClient;
  let aliceId: string;

  async function stored(userId: string): Promise<Record<string, any> | undefined> {
    const rt = app.app.runtime;
    const { userSettings } = rt.tables.core as unknown as CoreTables;
    const [row] = await rt.authDb.orm.select().from(userSettings).where(eq(userSettings.userId, userId));
    return row?.data;
  }

  async function store(userId: string, data: Record<string, unknown>): Promise<void> {
    const rt = app.app.runtime;
    const { userSettings } = rt.tables.core as unknown as CoreTables;
    await rt.authDb.orm.delete(userSettings).where(eq(userSettings.userId, userId));
    await rt.authDb.orm.insert(userSettings).values({ userId, data, updatedAt: new Date() });
  }

  beforeAll(async () => {
    app = await startTestApp({ database, settingsSections: [notifications] });
    const user = await app.createUser({ username: 'alice' });
    aliceId = user.id;
    alice = await app.loginAs(user);
  });
  afterAll(() => app.close());

  it('needs a token (401)', async () => {
    const res = await app.get(URL_);
    expect(res.status).toBe(401);
    expect(res.body.detail[0].code).toBe('auth.not_authenticated');
  });

  it('reads every default, nested by section with camelCase keys, before anything is stored', async () => {
    const res = await alice.get(URL_);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, data: DEFAULTS });
    expect(await stored(aliceId)).toBeUndefined();
  });

  it('sets one value by camelCase or snake_case names and answers the full values', async () => {
    const camel = await alice.put(`${URL_}/appearance/fontScale`, { value: 'lg' });
    expect(camel.status).toBe(200);
    expect(camel.body.data).toEqual({ ...DEFAULTS, appearance: { ...DEFAULTS.appearance, fontScale: 'lg' } });
    const snake = await alice.put(`${URL_}/preferences/table_page_size`, { value: 50 });
    expect(snake.status).toBe(200);
    expect(snake.body.data.preferences.tablePageSize).toBe(50);
    const project = await alice.put(`${URL_}/notifications/max_items`, { value: 50 });
    expect(project.body.data.notifications.maxItems).toBe(50);
    expect(await stored(aliceId)).toEqual({
      appearance: { fontScale: 'lg' },
      preferences: { tablePageSize: 50 },
      notifications: { maxItems: 50 },
    });
    expect((await alice.get(URL_)).body.data.appearance.fontScale).toBe('lg');
  });

  it('accepts every allowed value, the limits of tablePageSize, language tags, IANA names and null', async () => {
    const accepted: [string, string, unknown][] = [
      ['appearance', 'theme', 'dark'],
      ['appearance', 'theme', 'light'],
      ['appearance', 'accent', 'coral'],
      ['appearance', 'density', 'compact'],
      ['appearance', 'reduce_motion', true],
      ['preferences', 'date_format', 'ymd'],
      ['preferences', 'tablePageSize', 10],
      ['preferences', 'tablePageSize', 100],
      ['preferences', 'locale', 'de-CH'],
      ['preferences', 'locale', 'zh-Hant-TW'],
      ['preferences', 'locale', null],
      ['preferences', 'timezone', 'Europe/Berlin'],
      ['preferences', 'timezone', 'UTC'],
      ['preferences', 'timezone', null],
      ['audit', 'disableActivityLog', true],
      ['notifications', 'ratio', 0.25],
      ['notifications', 'signature', 'Regards'],
      ['notifications', 'signature', null],
    ];
    for (const [category, key, value] of accepted) {
      const res = await alice.put(`${URL_}/${category}/${key}`, { value });
      expect([category, key, value, res.status]).toEqual([category, key, value, 200]);
    }
    const values = (await alice.get(URL_)).body.data;
    expect(values.appearance).toMatchObject({
      theme: 'light',
      accent: 'coral',
      density: 'compact',
      reduceMotion: true,
    });
    expect(values.preferences).toMatchObject({
      locale: null,
      timezone: null,
      dateFormat: 'ymd',
      tablePageSize: 100,
    });
  });

  it('refuses a value that is not accepted: 422 user.settings_value_invalid at [body, value], nothing saved', async () => {
    const before = await stored(aliceId);
    const refused: [string, string, unknown][] = [
      ['appearance', 'theme', 'blue'],
      ['appearance', 'theme', null],
      ['appearance', 'accent', 1],
      ['appearance', 'reduceMotion', 'true'],
      ['preferences', 'tablePageSize', 9],
      ['preferences', 'tablePageSize', 101],
      ['preferences', 'tablePageSize', 25.5],
      ['preferences', 'tablePageSize', '25'],
      ['preferences', 'locale', 'not a tag!'],
      ['preferences', 'locale', 'en_US'],
      ['preferences', 'locale', ''],
      ['preferences', 'locale', 42],
      ['preferences', 'timezone', 'Mars/Olympus'],
      ['preferences', 'timezone', '+01:00'],
      ['preferences', 'dateFormat', { x: 1 }],
      ['preferences', 'dateFormat', ['auto']],
      ['notifications', 'ratio', 0],
      ['notifications', 'ratio', 1],
      ['notifications', 'maxItems', 51],
    ];
    for (const [category, key, value] of refused) {
      const res = await alice.put(`${URL_}/${category}/${key}`, { value });
      expect([category, key, value, res.status]).toEqual([category, key, value, 422]);
      expect(res.body.detail[0]).toMatchObject({
        code: 'user.settings_value_invalid',
        loc: ['body', 'value'],
      });
    }
    // The refusal names what the field takes: its values, or its type and range (params and message).
    const theme = await alice.put(`${URL_}/appearance/theme`, { value: 'blue' });
    expect(theme.body.detail[0].params).toMatchObject({ type: 'enum', values: ['dark', 'light', 'auto'] });
    expect(theme.body.detail[0].msg).toBe('This value is not accepted; allowed: dark, light, auto.');
    const size = await alice.put(`${URL_}/preferences/tablePageSize`, { value: 101 });
    expect(size.body.detail[0].params).toMatchObject({ type: 'integer', ge: 10, le: 100 });
    expect(size.body.detail[0].msg).toBe('This value is not accepted; allowed: integer in [10, 100].');
    const missing = await alice.put(`${URL_}/appearance/theme`, {});
    expect(missing.status).toBe(422);
    // A body without `value` is malformed rather than refused: the kernel's validation error, same loc.
    expect(missing.body.detail[0]).toMatchObject({
      code: 'request.validation_error',
      loc: ['body', 'value'],
      type: 'missing',
    });
    expect(await stored(aliceId)).toEqual(before);
  });

  it('answers 422 user.settings_category_invalid and user.settings_key_invalid with their loc', async () => {
    const category = await alice.put(`${URL_}/nope/theme`, { value: 'dark' });
    expect(category.status).toBe(422);
    expect(category.body.detail[0]).toMatchObject({
      code: 'user.settings_category_invalid',
      loc: ['path', 'category'],
    });
    const key = await alice.put(`${URL_}/appearance/nope`, { value: 'dark' });
    expect(key.status).toBe(422);
    expect(key.body.detail[0]).toMatchObject({ code: 'user.settings_key_invalid', loc: ['path', 'key'] });
    // SPEC "User settings": preferences.theme no longer exists.
    const theme = await alice.put(`${URL_}/preferences/theme`, { value: 'dark' });
    expect(theme.status).toBe(422);
    expect(theme.body.detail[0].code).toBe('user.settings_key_invalid');
  });

  it('patches several sections at once, or nothing when one value is refused', async () => {
    const bob = await app.loginAs(await app.createUser({ username: 'bob' }));
    const ok = await bob.patch(URL_, {
      appearance: { theme: 'dark', reduce_motion: true },
      preferences: { timezone: 'America/New_York' },
      notifications: { emailDigest: 'weekly' },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.data).toEqual({
      ...DEFAULTS,
      appearance: { ...DEFAULTS.appearance, theme: 'dark', reduceMotion: true },
      preferences: { ...DEFAULTS.preferences, timezone: 'America/New_York' },
      notifications: { ...DEFAULTS.notifications, emailDigest: 'weekly' },
    });
    const before = await stored(bob.user.id);

    const refused = await bob.patch(URL_, {
      appearance: { theme: 'light' },
      preferences: { tablePageSize: 1000 },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.detail[0]).toMatchObject({
      code: 'user.settings_value_invalid',
      loc: ['body', 'value'],
    });
    expect(refused.body.detail[0].params).toEqual({
      category: 'preferences',
      key: 'tablePageSize',
      type: 'integer',
      ge: 10,
      le: 100,
      nullable: false,
      allowed: 'integer in [10, 100]',
    });
    const unknownSection = await bob.patch(URL_, { appearance: { theme: 'light' }, nope: { a: 1 } });
    expect(unknownSection.status).toBe(422);
    expect(unknownSection.body.detail[0]).toMatchObject({
      code: 'user.settings_category_invalid',
      loc: ['body', 'nope'],
    });
    const unknownKey = await bob.patch(URL_, { appearance: { theme: 'light', nope: 1 } });
    expect(unknownKey.status).toBe(422);
    expect(unknownKey.body.detail[0]).toMatchObject({
      code: 'user.settings_key_invalid',
      loc: ['body', 'appearance', 'nope'],
    });
    expect(await stored(bob.user.id)).toEqual(before);
    expect((await bob.get(URL_)).body.data.appearance.theme).toBe('dark');

    const notObject = await bob.patch(URL_, { appearance: 'dark' });
    expect(notObject.status).toBe(422);
    expect(notObject.body.detail[0].code).toBe('request.validation_error');
  });

  it('reads invalid stored values as defaults and keeps unknown stored fields untouched', async () => {
    const carol = await app.loginAs(await app.createUser({ username: 'carol' }));
    await store(carol.user.id, {
      appearance: { accent: 'indigo', density: 'huge' },
      preferences: { theme: 'dark', table_page_size: 500, date_format: 'dmy' },
      retired: { something: [1, 2] },
    });
    const res = await carol.get(URL_);
    expect(res.body.data.appearance).toEqual({ ...DEFAULTS.appearance, accent: 'indigo' });
    // `preferences.theme` is ignored; snake_case keys of older documents still read.
    expect(res.body.data.preferences).toEqual({ ...DEFAULTS.preferences, dateFormat: 'dmy' });
    expect(res.body.data.retired).toBeUndefined();

    await carol.put(`${URL_}/preferences/tablePageSize`, { value: 30 });
    await carol.patch(URL_, { appearance: { density: 'compact' } });
    expect(await stored(carol.user.id)).toEqual({
      appearance: { accent: 'indigo', density: 'compact' },
      preferences: { theme: 'dark', table_page_size: 30, date_format: 'dmy' },
      retired: { something: [1, 2] },
    });
    expect((await carol.get(URL_)).body.data.preferences.tablePageSize).toBe(30);
  });

  it("keeps each user's settings apart", async () => {
    const dave = await app.loginAs(await app.createUser({ username: 'dave' }));
    await dave.put(`${URL_}/appearance/theme`, { value: 'light' });
    const erin = await app.loginAs(await app.createUser({ username: 'erin' }));
    expect((await erin.get(URL_)).body.data.appearance.theme).toBe('auto');
    expect((await dave.get(URL_)).body.data.appearance.theme).toBe('light');
  });
});

describeEachDatabase('user settings router disabled', (database) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ database, settings: { disable_core_routers: ['settings'] } });
  });
  afterAll(() => app.close());

  it('removes the routes and keeps the userSettings port', async () => {
    const user = await app.createUser({ username: 'alice' });
    const alice = await app.loginAs(user);
    expect((await alice.get(URL_)).status).toBe(404);
    expect(await app.app.runtime.ports.get('userSettings').get(user.id, 'audit.disableActivityLog')).toBe(
      false,
    );
  });
});

describeEachDatabase('user settings with global_noauth', (database) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ database, settings: { global_noauth: true } });
  });
  afterAll(() => app.close());

  it('serves the schema but answers 401 for values, since there is no user to hold them', async () => {
    expect((await app.get(`${URL_}/schema`)).status).toBe(200);
    const res = await app.get(URL_);
    expect(res.status).toBe(401);
    expect(res.body.detail[0].code).toBe('auth.not_authenticated');
  });
});
