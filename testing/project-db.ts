import { Writable } from 'node:stream';
import { createLogger, openDatabase, SettingsSchema } from '@svc/core/internal';
import { sql } from 'drizzle-orm';

/** Rows of a query on a project's database (SQLite file or PostgreSQL), opened and closed for this query. */
export async function rowsOf<T>(url: string, dir: string, query: string): Promise<T[]> {
  const log = createLogger({
    level: 'CRITICAL',
    format: 'text',
    stream: new Writable({ write: (_c, _e, cb) => cb() }),
  });
  const db = openDatabase({ url, settings: SettingsSchema.parse({}), log, baseDir: dir });
  try {
    return await db.all<T>(sql.raw(query) as never); // two drizzle-orm installs may differ in type identity
  } finally {
    await db.close();
  }
}
