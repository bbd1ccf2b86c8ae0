import { readFileSync } from 'node:fs';

/** The name of the service software (SPEC: `app_name` falls back to it). */
export const SERVICE_NAME = 'svc';

/** Version of the installed `@svc/core` (SPEC "Versioning" 1), read from its package.json. */
export const SERVICE_VERSION: string = (() => {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version?: string;
    };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
})();
