import { z } from 'zod';
// eslint-disable-next-line no-restricted-imports -- the service's name and version belong in the kernel (ARCHITECTURE.md); until they move
import { SERVICE_NAME, SERVICE_VERSION } from '../app/version.js';
import { SvcError } from '../kernel/errors/svc-error.js';
import { defineModule } from '../kernel/module.js';
import { defineRouter } from '../kernel/router.js';

/** SPEC "Limits": readiness probe database timeout. */
export const READINESS_TIMEOUT_MS = 3_000;

const HealthOut = z.object({
  name: z.string(),
  version: z.string(),
  description: z.string(),
  database: z.boolean(),
});
const LiveOut = z.object({ status: z.literal('ok') });
const VersionOut = z.object({ version: z.string() });

/** Health (`/health/`, `/health/live`, `/health/ready`) and version (`/version/`) routes, all public. */
export const healthModule = defineModule({
  name: 'health',
  setup({ settings, authDb }) {
    const missing = !settings.auth_database_url && !settings.database_url;
    const payload = async () => ({
      name: settings.project_name || settings.app_name || SERVICE_NAME,
      version: settings.version || SERVICE_VERSION,
      description: settings.description,
      database: missing ? false : await authDb.ping(READINESS_TIMEOUT_MS),
    });
    const health = defineRouter({ prefix: '/health', name: 'health', tags: ['health'], public: true });
    health.get('/', { summary: 'Service health', response: HealthOut }, payload);
    health.get('/live', { summary: 'Liveness probe', response: LiveOut, envelope: false }, () => ({
      status: 'ok' as const,
    }));
    health.get('/ready', { summary: 'Readiness probe', response: HealthOut }, async () => {
      const body = await payload();
      if (!body.database) throw new SvcError('health.not_ready');
      return body;
    });
    const version = defineRouter({ prefix: '/version', name: 'version', tags: ['version'], public: true });
    version.get('/', { summary: 'Version of the service software', response: VersionOut }, () => ({
      version: SERVICE_VERSION,
    }));
    return { routers: [health, version] };
  },
});
