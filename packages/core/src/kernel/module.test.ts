import { sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { pgTable, text as pgText } from 'drizzle-orm/pg-core';
import { z } from 'zod';
import { createApp } from '../app/create-app.js';
import { coreModules } from '../app/modules.js';
import { describeEachDatabase, startTestApp } from '../testing/index.js';
import { defineModule, orderModules, type SvcModule } from './module.js';
import { defineRouter } from './router.js';

const noteTables = (dialect: 'sqlite' | 'pg') =>
  dialect === 'pg'
    ? { note: pgTable('module_test_note', { id: pgText('id').primaryKey() }) }
    : { note: sqliteTable('module_test_note', { id: text('id').primaryKey() }) };

const plain = (name: string, extra: Partial<SvcModule> = {}): SvcModule => ({
  name,
  setup: () => ({}),
  ...extra,
});

describe('orderModules', () => {
  it('keeps the given order when nothing requires a later module', () => {
    const modules = [plain('a'), plain('b', { provides: ['permissions'] }), plain('c')];
    expect(orderModules(modules).map((m) => m.name)).toEqual(['a', 'b', 'c']);
  });

  it('sets a module up after the providers of the ports it requires', () => {
    const modules = [
      plain('reports', { requires: ['permissions', 'loginGuard'] }),
      plain('guard', { provides: ['loginGuard'] }),
      plain('rbac', { provides: ['permissions'] }),
    ];
    expect(orderModules(modules).map((m) => m.name)).toEqual(['rbac', 'guard', 'reports']);
  });

  it('refuses a required port nobody provides, naming the module and the port', () => {
    expect(() => orderModules([plain('health'), plain('reports', { requires: ['permissions'] })])).toThrow(
      "module 'reports' requires the 'permissions' port, which no module provides (modules: health, reports)",
    );
  });

  it('refuses modules that require each other in a circle', () => {
    const modules = [
      plain('a', { provides: ['tokens'], requires: ['permissions'] }),
      plain('b', { provides: ['permissions'], requires: ['tokens'] }),
    ];
    expect(() => orderModules(modules)).toThrow(/in a circle: a -> b -> a/);
  });

  it('takes the kernel ports as provided without ordering on them', () => {
    const modules = [plain('x', { requires: ['events'] }), plain('events', { provides: ['events'] })];
    expect(orderModules(modules).map((m) => m.name)).toEqual(['x', 'events']);
  });

  it('orders the core modules as they are listed (nothing is set up before what it requires)', () => {
    expect(orderModules(coreModules)).toEqual(coreModules);
  });
});

describeEachDatabase('defineModule in an app', (database) => {
  it('gives a project module its own typed tables, the kernel tables and the ports it declared', async () => {
    const seen: string[] = [];
    const notes = defineModule({
      name: 'notes',
      tables: (_settings, dialect) => noteTables(dialect),
      requires: ['permissions'],
      provides: [],
      setup({ tables, coreTables, ports, authDb }) {
        // Typed without casts: the module's table, the kernel's user table, a required port.
        seen.push(Object.keys(tables).join(','), typeof coreTables.user, typeof ports.get('permissions'));
        const router = defineRouter({ prefix: '/module-notes' });
        router.get('/', { public: true, response: z.object({ dialect: z.string() }) }, () => ({
          dialect: authDb.dialect,
        }));
        return { routers: [router] };
      },
    });
    // Listed before everything: still set up after rbac, which provides `permissions`.
    const app = await startTestApp({ database, coreModules: [notes, ...coreModules] });
    try {
      expect(seen).toEqual(['note', 'object', 'object']);
      expect(Object.keys(app.app.runtime.tables.notes ?? {})).toEqual(['note']);
      const res = await app.get('/api/module-notes/');
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({ dialect: database.dialect });
    } finally {
      await app.close();
    }
  });

  it('refuses to start when a required port has no provider, naming both', async () => {
    const reports = defineModule({ name: 'reports', requires: ['activity'], setup: () => ({}) });
    const withoutAudit = coreModules.filter((m) => m.name !== 'audit');
    const app = createApp({
      coreModules: [...withoutAudit, reports],
      settings: { secret_key: 'k'.repeat(40), auth_database_url: database.url },
    });
    await expect(app.init()).rejects.toThrow(
      /module 'reports' requires the 'activity' port, which no module provides/,
    );
  });

  it('passes a core module only the createApp options it declared', async () => {
    let given: Record<string, unknown> = {};
    const probe = defineModule({
      name: 'probe',
      setup({ options }) {
        given = options;
        return {};
      },
    });
    const mfa = coreModules.find((m) => m.name === 'mfa')!;
    let mfaGot: Record<string, unknown> = {};
    const mfaSpy: SvcModule = {
      ...mfa,
      setup(context) {
        mfaGot = context.options;
        return mfa.setup(context);
      },
    };
    const sender = { sendEmailCode: () => undefined, sendSmsCode: () => undefined };
    const app = await startTestApp({
      database,
      coreModules: coreModules.map((m) => (m === mfa ? mfaSpy : m)),
      modules: [probe],
      mfaSender: sender,
      settingsSections: [],
    });
    try {
      expect(given).toEqual({});
      expect(mfaGot).toEqual({ mfaSender: sender });
    } finally {
      await app.close();
    }
  });
});
