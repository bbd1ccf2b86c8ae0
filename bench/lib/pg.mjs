// docs/performance.md "Benchmark suite": a fresh PostgreSQL database per benchmark run (created from SVC_TEST_POSTGRES_URL, dropped after).
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { ROOT } from './project.mjs';

const postgres = createRequire(join(ROOT, 'packages', 'core', 'package.json'))('postgres');

export default {
  /** A small client of `url` (the bench's own queries). */
  client: (url) => postgres(url, { max: 1, onnotice: () => {} }),

  async create(adminUrl) {
    const name = `svc_bench_${randomBytes(4).toString('hex')}`;
    const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
    await admin.unsafe(`CREATE DATABASE ${name}`);
    await admin.end();
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    return {
      url: url.href,
      async drop() {
        const a = postgres(adminUrl, { max: 1, onnotice: () => {} });
        await a.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await a.end();
      },
    };
  },
};
