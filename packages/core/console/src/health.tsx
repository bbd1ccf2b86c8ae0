// The service's health and version (SPEC "Health", `GET /health/` and `GET /version/`).
import { call } from './api.js';
import { t } from './i18n.js';
import { ErrorMessage, useLoad, yesNo } from './ui.js';

interface Health {
  name: string;
  description: string;
  version: string;
  database: boolean;
}

export function HealthPage() {
  const data = useLoad('health', async (client) => {
    const [health, version] = await Promise.all([
      call<Health>(client, 'GET', '/health/'),
      call<{ version: string }>(client, 'GET', '/version/'),
    ]);
    return { health, version: version.version };
  });
  return (
    <>
      <h1>{t('health')}</h1>
      <ErrorMessage message={data.error} />
      {data.data && (
        <dl className="facts">
          <dt>{t('service')}</dt>
          <dd>{data.data.health.name}</dd>
          <dt>{t('description')}</dt>
          <dd>{data.data.health.description || '—'}</dd>
          <dt>{t('version')}</dt>
          <dd>{data.data.version}</dd>
          <dt>{t('database')}</dt>
          <dd>{yesNo(data.data.health.database)}</dd>
        </dl>
      )}
    </>
  );
}
