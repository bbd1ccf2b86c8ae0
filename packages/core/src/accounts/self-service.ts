import type { Settings } from '../kernel/config/schema.js';
import { SvcError } from '../kernel/errors/svc-error.js';
import type { ModulePorts } from '../kernel/module.js';
import { ACCOUNT_EXPORT_KEYS } from './constants.js';

export interface SelfServiceDeps {
  settings: Settings;
  ports: ModulePorts<never, 'loginGuard', 'accountExport' | 'accountRemoval' | 'secondFactor'>;
}

/**
 * The attachment name of an export: `svc-account-<username>.json`, with an ASCII `filename` (characters
 * outside a safe set become `_`) and the exact name in `filename*` (RFC 6266, RFC 8187).
 */
export function exportDisposition(username: string): string {
  const ascii = username.replace(/[^A-Za-z0-9._-]/g, '_');
  const exact = encodeURIComponent(username).replace(
    /['()*!]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="svc-account-${ascii}.json"; filename*=UTF-8''svc-account-${exact}.json`;
}

/** `GET /auth/user/export` and `DELETE /auth/user` (SPEC-2 "Administration and self-service"). */
export function createSelfService({ settings, ports }: SelfServiceDeps) {
  return {
    /**
     * Everything stored about the user: each module's part (kernel/module.ts `accountExport`), the documented
     * keys first, each as `[]` while no module provides it, then the keys a project's modules add.
     */
    async exportAccount(userId: string): Promise<Record<string, unknown>> {
      const parts = ports.find('accountExport')?.parts ?? {};
      const documented: readonly string[] = ACCOUNT_EXPORT_KEYS;
      const keys = [...documented, ...Object.keys(parts).filter((key) => !documented.includes(key))];
      const values = await Promise.all(keys.map((key) => parts[key]?.(userId) ?? Promise.resolve([])));
      return Object.fromEntries(keys.map((key, index) => [key, values[index]]));
    },

    /**
     * Deletes the caller's account as `DELETE /admin/user/{user_id}` does, after the password (counted on the
     * login counter) and, with MFA active, a TOTP or backup code (counted too).
     */
    async deleteOwnAccount(userId: string, password: string, code: string | undefined): Promise<void> {
      if (!settings.self_delete_enabled) throw new SvcError('auth.self_delete_disabled');
      const guard = ports.get('loginGuard');
      // SPEC "Account login lock": a locked account answers 429 with Retry-After before any check.
      await guard.assertNotLocked(userId, 'auth.too_many_attempts');
      if (!(await guard.verifyPassword(userId, password))) {
        throw new SvcError('auth.password_incorrect', { loc: ['body', 'password'] });
      }
      const removal = ports.find('accountRemoval');
      if (!removal) throw new Error('account deletion needs the users module (the accountRemoval port)');
      // The only active superuser is refused before the code is checked, so the refusal uses up no backup code.
      await removal.assertRemovable(userId, ['body']);
      await ports.find('secondFactor')?.checkAccountCode(userId, code);
      await removal.deleteAccount(userId, ['body']);
    },
  };
}

export type SelfService = ReturnType<typeof createSelfService>;
