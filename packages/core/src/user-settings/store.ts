import { eq } from 'drizzle-orm';
import type { Database } from '../kernel/db/database.js';
import { forUpdate } from '../kernel/db/sql.js';
import type { CoreTables } from '../kernel/db/tables.js';

/** The stored JSON document of one user: sections of fields, plus whatever older versions left there. */
export type SettingsDocument = Record<string, unknown>;

/** Every query on the user settings table. */
export function createSettingsStore(db: Database, tables: CoreTables) {
  const { userSettings } = tables;
  return {
    async read(userId: string): Promise<SettingsDocument> {
      const [row] = await db.orm
        .select({ data: userSettings.data })
        .from(userSettings)
        .where(eq(userSettings.userId, userId));
      return row && row.data && typeof row.data === 'object' && !Array.isArray(row.data) ? row.data : {};
    },

    /**
     * Read-modify-write of the document in one transaction: `change` gets the stored document and returns the
     * new one. The row is locked (PostgreSQL `FOR UPDATE`; SQLite transactions are serialised), so two
     * concurrent writes of different fields both survive.
     */
    update(userId: string, change: (doc: SettingsDocument) => SettingsDocument): Promise<SettingsDocument> {
      return db.transaction(async (tx) => {
        await tx
          .insert(userSettings)
          .values({ userId, data: {}, updatedAt: new Date() })
          .onConflictDoNothing({ target: userSettings.userId });
        const select = tx
          .select({ data: userSettings.data })
          .from(userSettings)
          .where(eq(userSettings.userId, userId));
        const [row] = await forUpdate(db.dialect, select);
        const current = row?.data && typeof row.data === 'object' && !Array.isArray(row.data) ? row.data : {};
        const next = change(structuredClone(current));
        await tx
          .update(userSettings)
          .set({ data: next, updatedAt: new Date() })
          .where(eq(userSettings.userId, userId));
        return next;
      });
    },
  };
}

export type SettingsStore = ReturnType<typeof createSettingsStore>;
