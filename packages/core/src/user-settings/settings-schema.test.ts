import { addTranslations } from '../kernel/i18n/index.js';
import { describeEachDatabase, startTestApp, type LoggedInClient, type TestApp } from '../testing/index.js';
import { defineSettingsSection } from './define.js';

const SCHEMA = '/api/auth/user/settings/schema';

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
      events: { change: { action: 'notify.refresh', args: { scope: 'digest' } } },
      watch: { maxItems: 'recount' },
    },
    maxItems: { type: 'integer', ge: 1, le: 50, default: 10, properties: { suffix: 'items', dense: true } },
    ratio: { type: 'float', gt: 0, lt: 1, default: 0.5, component: 'slider' },
    signature: { type: 'string' },
  },
});

addTranslations('de', {
  'settings.notifications.title': 'Benachrichtigungen',
  'settings.notifications.max_items.properties.suffix': 'Einträge',
});

describeEachDatabase('settings schema', (database) => {
  let app: TestApp;
  let alice: LoggedInClient;
  beforeAll(async () => {
    app = await startTestApp({
      database,
      settingsSections: [notifications],
      settings: { use_accept_language: true },
    });
    alice = await app.loginAs(await app.createUser({ username: 'alice' }));
  });
  afterAll(() => app.close());

  const section = (body: any, name: string) =>
    body.data.sections.find((s: { name: string }) => s.name === name);
  const field = (body: any, sectionName: string, name: string) =>
    section(body, sectionName).fields.find((f: { name: string }) => f.name === name);

  it('needs a token', async () => {
    expect((await app.get(SCHEMA)).status).toBe(401);
  });

  it('describes the built-in sections with inferred components, options, limits, apply and defaults', async () => {
    const res = await alice.get(SCHEMA);
    expect(res.status).toBe(200);
    expect(res.body.data.sections.map((s: { name: string }) => s.name)).toEqual([
      'appearance',
      'preferences',
      'audit',
      'notifications',
    ]);
    expect(section(res.body, 'appearance')).toMatchObject({
      title: 'Appearance',
      titleKey: 'settings.appearance.title',
      icon: 'palette',
      route: '/settings/appearance',
    });
    expect(field(res.body, 'appearance', 'theme')).toEqual({
      name: 'theme',
      type: 'enum',
      label: 'Theme',
      labelKey: 'settings.appearance.theme.label',
      component: 'select',
      apply: 'theme',
      properties: {
        options: [
          { value: 'dark', label: 'Dark' },
          { value: 'light', label: 'Light' },
          { value: 'auto', label: 'Automatic' },
        ],
        emitValue: true,
        mapOptions: true,
      },
      propertyKeys: {},
      optionKeys: {
        dark: 'settings.appearance.theme.options.dark',
        light: 'settings.appearance.theme.options.light',
        auto: 'settings.appearance.theme.options.auto',
      },
      events: {},
      watch: {},
      required: false,
      nullable: false,
      default: 'auto',
    });
    expect(field(res.body, 'appearance', 'fontScale')).toMatchObject({
      labelKey: 'settings.appearance.font_scale.label',
      apply: 'fontScale',
      default: 'md',
    });
    expect(field(res.body, 'appearance', 'accent').properties.options).toHaveLength(5);
    expect(field(res.body, 'appearance', 'reduceMotion')).toMatchObject({
      component: 'toggle',
      apply: 'reduceMotion',
      default: false,
    });
    expect(field(res.body, 'preferences', 'tablePageSize')).toMatchObject({
      type: 'integer',
      component: 'number',
      properties: { min: 10, max: 100 },
      default: 25,
      apply: null,
      labelKey: 'settings.preferences.table_page_size.label',
    });
    expect(field(res.body, 'preferences', 'locale')).toMatchObject({
      component: 'input',
      apply: 'locale',
      nullable: true,
      default: null,
      propertyKeys: {
        placeholder: 'settings.preferences.locale.properties.placeholder',
        hint: 'settings.preferences.locale.properties.hint',
      },
    });
    expect(field(res.body, 'preferences', 'timezone')).toMatchObject({ default: null, apply: null });
    expect(field(res.body, 'preferences', 'dateFormat').properties.options[1]).toEqual({
      value: 'dmy',
      label: 'Day/month/year',
    });
    expect(field(res.body, 'audit', 'disableActivityLog')).toMatchObject({
      component: 'toggle',
      default: false,
      labelKey: 'settings.audit.disable_activity_log.label',
    });
  });

  it('describes a project section: readable option labels, events/watch as {action, args}, required fields', async () => {
    const res = await alice.get(SCHEMA);
    expect(section(res.body, 'notifications')).toMatchObject({
      title: 'Notifications',
      titleKey: 'settings.notifications.title',
      icon: 'bell',
      route: '/settings/notifications',
    });
    expect(field(res.body, 'notifications', 'emailDigest')).toMatchObject({
      label: 'Email digest',
      labelKey: 'settings.notifications.email_digest.label',
      component: 'select',
      properties: {
        options: [
          { value: 'off', label: 'Off' },
          { value: 'daily', label: 'Daily' },
          { value: 'weekly', label: 'Weekly' },
        ],
        emitValue: true,
        mapOptions: true,
      },
      optionKeys: { off: 'settings.notifications.email_digest.options.off' },
      events: { change: { action: 'notify.refresh', args: { scope: 'digest' } } },
      watch: { maxItems: { action: 'recount', args: {} } },
      default: 'daily',
    });
    expect(field(res.body, 'notifications', 'maxItems')).toMatchObject({
      label: 'Max items',
      labelKey: 'settings.notifications.max_items.label',
      component: 'number',
      properties: { min: 1, max: 50, suffix: 'items', dense: true },
      propertyKeys: { suffix: 'settings.notifications.max_items.properties.suffix' },
    });
    expect(field(res.body, 'notifications', 'ratio')).toMatchObject({
      component: 'slider',
      properties: { min: 0, max: 1 },
    });
    const signature = field(res.body, 'notifications', 'signature');
    expect(signature).toMatchObject({ component: 'input', required: true, nullable: false });
    expect('default' in signature).toBe(false);
  });

  it('translates titles, labels, options and property texts into the request language', async () => {
    const res = await alice.get(SCHEMA, { headers: { 'Accept-Language': 'de-DE,de;q=0.9' } });
    expect(res.status).toBe(200);
    expect(section(res.body, 'appearance').title).toBe('Darstellung');
    expect(field(res.body, 'appearance', 'theme').label).toBe('Farbschema');
    expect(field(res.body, 'appearance', 'theme').properties.options[0]).toEqual({
      value: 'dark',
      label: 'Dunkel',
    });
    expect(field(res.body, 'preferences', 'locale').properties.placeholder).toBe('Automatisch');
    expect(section(res.body, 'notifications').title).toBe('Benachrichtigungen');
    expect(field(res.body, 'notifications', 'maxItems').properties.suffix).toBe('Einträge');
    // No key in any catalog: the text written in code.
    expect(field(res.body, 'notifications', 'emailDigest').label).toBe('Email digest');
  });
});

describe('defineSettingsSection', () => {
  it('refuses an action that is not a plain name, naming the section and field', () => {
    expect(() =>
      defineSettingsSection({
        name: 'bad',
        fields: { theme: { type: 'boolean', events: { change: 'alert(document.cookie)' } } },
      }),
    ).toThrow(/settings section 'bad', field 'theme'.*not a plain action name/);
    expect(() =>
      defineSettingsSection({
        name: 'bad',
        fields: { other: { type: 'boolean', watch: { theme: { action: '1abc' } } } },
      }),
    ).toThrow(/'bad', field 'other'/);
    expect(() =>
      defineSettingsSection({
        name: 'bad',
        fields: { fn: { type: 'boolean', events: { change: (() => 1) as unknown as string } } },
      }),
    ).toThrow(/'bad', field 'fn'/);
    expect(() =>
      defineSettingsSection({
        name: 'bad',
        fields: { args: { type: 'boolean', events: { change: { action: 'ok', args: { f: () => 1 } } } } },
      }),
    ).toThrow(/'bad', field 'args'.*JSON object/);
    expect(() =>
      defineSettingsSection({ name: 'bad', fields: { apply: { type: 'boolean', apply: 'x; y()' } } }),
    ).toThrow(/'bad', field 'apply'/);
  });

  it('refuses a default that breaks the field rules and an enum without values', () => {
    expect(() =>
      defineSettingsSection({ name: 's', fields: { n: { type: 'integer', ge: 1, default: 0 } } }),
    ).toThrow(/'s', field 'n'/);
    expect(() => defineSettingsSection({ name: 's', fields: { e: { type: 'enum', values: [] } } })).toThrow(
      /'s', field 'e'/,
    );
  });

  it('accepts plain names with letters, digits, _, . and -', () => {
    const section = defineSettingsSection({
      name: 'ok_section',
      fields: { f: { type: 'boolean', default: true, events: { change: 'ui.reload-all_2' } } },
    });
    expect(section.fields[0]!.events).toEqual({ change: { action: 'ui.reload-all_2', args: {} } });
    expect(section.name).toBe('okSection');
  });
});
