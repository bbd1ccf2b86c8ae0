import { defineModule, type ModuleInstance } from '../kernel/module.js';
import { COUNT_BUDGET_MS } from './constants.js';
import { createActivityRecorder } from './recorder.js';
import { createAuditRouter } from './routes.js';
import { createActivityService } from './service.js';
import { createActivityStore } from './store.js';
import { auditTables } from './tables.js';
import { createActivityWriter } from './writer.js';

/** Tuning of the audit module; the defaults are the documented values (tests shorten them). */
export interface AuditModuleOptions {
  /**
   * PostgreSQL: the time budget of each bounded count of `GET /admin/audit/logs`, ms (docs/activity-log.md
   * "Large logs"). @default COUNT_BUDGET_MS
   */
  countBudgetMs?: number;
}

/**
 * The activity log (SPEC "Activity log recording rules", "Audit routes"): records write requests through the
 * kernel's request hook into a write-behind queue, serves `/admin/audit` to superusers and the `activity`
 * port (events snapshot). Router name `audit`; nothing is recorded or mounted unless `activity_log_enabled`.
 * @example
 * createApp({ coreModules: coreModules.map((m) => (m.name === 'audit' ? createAuditModule({ countBudgetMs: 1 }) : m)) });
 */
export function createAuditModule(moduleOptions: AuditModuleOptions = {}) {
  return defineModule({
    name: 'audit',
    tables: auditTables,
    provides: ['activity'],
    uses: ['authenticator', 'userSettings'],
    setup({ settings, authDb, tables, log, ports }) {
      const table = tables.activityLog;
      const store = createActivityStore(authDb, table, log, {
        concurrently: !settings.auto_create_auth_schema,
      });
      const writer = createActivityWriter({ insertMany: (entries) => store.insertMany(entries), log });
      const service = createActivityService({
        settings,
        store,
        table,
        drain: () => writer.drain(),
        countBudgetMs: moduleOptions.countBudgetMs ?? COUNT_BUDGET_MS,
      });
      // The snapshot reads whatever is stored, also when recording is off (SPEC "Frame format").
      ports.provide('activity', { recent: (limit) => service.snapshot(limit) });
      // SPEC-2 "Administration and self-service": the export's `activity`, also what was stored before recording
      // was turned off.
      const accountExport = { activity: (userId: string) => service.ofUser(userId) };
      if (!settings.activity_log_enabled) return { accountExport };

      const recorder = createActivityRecorder({
        settings,
        // activity_log_sync: the response waits for its entry's INSERT, so a killed process loses no answered
        // entry; otherwise entries are written behind (docs/activity-log.md "Write-behind").
        enqueue: settings.activity_log_sync
          ? (entry) => writer.write(entry)
          : (entry) => writer.enqueue(entry),
        authenticator: () => ports.find('authenticator'),
        userSettings: () => ports.find('userSettings'),
        events: () => ports.get('events'),
        log,
      });
      // Entries no request records itself (SPEC-3 §4 an impersonation ended by a demotion, §1 a link at the
      // callback): the same queue, sanitising and event as a request's.
      ports.provide('activity', {
        recent: (limit) => service.snapshot(limit),
        record: (entry) => recorder.record(entry),
      });
      return {
        routers: [createAuditRouter(service)],
        accountExport,
        ...(settings.activity_log_sync
          ? { beforeResponse: (record) => recorder.beforeResponse(record) }
          : { onRequestEnd: (record) => recorder.onRequestEnd(record) }),
        onStartup: async () => void (await store.ensureTextIndex()),
        async onShutdown() {
          await recorder.settle();
          await writer.close();
          await store.close();
        },
      } satisfies ModuleInstance;
    },
  });
}

/** The audit module with the documented count budget. */
export const auditModule = createAuditModule();

export { purgeActivityLog, type PurgeActivityOptions, type PurgeActivityResult } from './purge.js';
