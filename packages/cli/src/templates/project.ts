/**
 * The files `svc init` writes into a new project (no `main.*` yet), as string constants so that they ship
 * inside `dist/` with the compiled CLI (no loose template files to copy).
 */

/** The starter app: one router with a public route and a permission-protected one. */
export const STARTER_MAIN_TS = `// main.ts: the app of this project, written by \`svc init\` (yours to edit: svc init never overwrites it).
// \`svc serve\` and \`svc dev\` import this module and start the export \`app\`; the module itself must not
// start a server. TypeScript needs no build step: svc loads this file through tsx.
import { createApp, defineRouter } from '@svc/core';

// Routes of a router are mounted under /api + its prefix: here /api/notes/about and /api/notes/.
// tags group them in the API documentation at /docs (the core routes, such as /api/auth/user, are at /docs/core).
const notes = defineRouter({ prefix: '/notes', tags: ['notes'] });

// Public: answers without a token.
notes.get('/about', { public: true, summary: 'About this service (public)' }, async () => ({
  service: 'notes',
}));

// Protected: needs a logged-in user holding the permission notes.read (401 without a token, 403 without the
// permission). A superuser passes every permission check; other users get notes.read through a group
// (POST /api/admin/permissions/permissions, then a group that holds it).
notes.get(
  '/',
  { summary: 'List notes (needs notes.read)', permissions: ['notes.read'] },
  async (ctx) => [{ id: 1, text: \`hello \${ctx.user.username}\` }],
);

export const app = createApp({
  routers: [notes],
});
`;

/**
 * The settings `svc.yaml` starts with, in order, with a comment each (values: the current defaults); a comment
 * may span lines (`\n`).
 */
const STARTER_SETTINGS: { name: string; comment: string; commentedOut?: string }[] = [
  { name: 'app_name', comment: 'Name shown in the API documentation (and the TOTP issuer)' },
  { name: 'host', comment: 'Bind address of svc serve / svc dev (0.0.0.0 accepts other machines)' },
  { name: 'port', comment: 'Bind port of svc serve / svc dev' },
  { name: 'registration_enabled', comment: 'Let anybody create an account with POST /api/auth/register' },
  { name: 'mfa_enabled', comment: 'Ask users who enabled multi-factor authentication for the second step' },
  { name: 'activity_log_enabled', comment: 'Record every POST/PUT/PATCH/DELETE and serve the audit routes' },
  { name: 'events_broadcast_enabled', comment: 'Mount the WebSocket event routes (ticket and stream)' },
  {
    name: 'cache_url',
    comment: 'Shared Redis cache, needed with several workers or hosts (empty: in-process cache)',
    commentedOut: 'redis://127.0.0.1:6379',
  },
  { name: 'log_format', comment: 'Log line format: text or json' },
  {
    name: 'auth_rate_limit',
    comment: [
      'Requests per client address and auth_rate_window_seconds on login, registration, passkey login and mailed',
      'links (429 beyond). 0 (the default) is no limit: set one before production, e.g. 10 (docs/deployment.md).',
    ].join('\n'),
  },
];

/**
 * Behind a reverse proxy the client address (the rate limit's key, the activity log's) comes from
 * `X-Forwarded-For`, trusted from loopback only unless told otherwise: a command-line option, not a setting, so
 * said here as a comment (docs/deployment.md "Checklist").
 */
const PROXY_NOTE = [
  'Behind a reverse proxy or load balancer: svc serve trusts X-Forwarded-For from loopback only by default.',
  'Name the proxy instead, e.g. `svc serve --forwarded-allow-ips 10.0.0.5` (or FORWARDED_ALLOW_IPS=10.0.0.5',
  'in the environment); without a proxy, `svc serve --no-proxy-headers`. If clients can reach svc on loopback',
  'directly, trusting loopback lets them choose their address and escape auth_rate_limit (docs/cli.md).',
];

function yamlScalar(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

/**
 * `svc.yaml` with the common non-secret settings at their defaults (`defaults`: the parsed settings schema),
 * each with a comment. Secrets never go here (SPEC "Configuration").
 */
export function starterSvcYaml(defaults: Record<string, unknown>): string {
  const lines = [
    '# svc.yaml: settings of this project, written by `svc init` with their defaults. Every setting is listed in',
    '# docs/configuration.md of svc; SVC_<NAME> in the environment or .env wins over this file.',
    '# No secrets here: secret_key and the database URLs belong in .env (kept out of version control).',
  ];
  for (const { name, comment, commentedOut } of STARTER_SETTINGS) {
    lines.push('', ...comment.split('\n').map((line) => `# ${line}`));
    lines.push(
      commentedOut === undefined ? `${name}: ${yamlScalar(defaults[name])}` : `# ${name}: ${commentedOut}`,
    );
  }
  lines.push('', ...PROXY_NOTE.map((line) => `# ${line}`));
  return `${lines.join('\n')}\n`;
}

/** npm package name from a directory name (lower case, URL-safe, no leading dot or underscore). */
function packageNameOf(dirName: string): string {
  const name = dirName
    .toLowerCase()
    .replace(/[^a-z0-9._~-]+/g, '-')
    .replace(/^[._-]+/, '')
    .slice(0, 214);
  return name === '' ? 'svc-project' : name;
}

/** A minimal `package.json`: an ES module package (main.ts uses `import`) with start and dev scripts. */
export function starterPackageJson(dirName: string): string {
  const manifest = {
    name: packageNameOf(dirName),
    version: '0.1.0',
    private: true,
    type: 'module',
    scripts: { start: 'svc serve', dev: 'svc dev' },
  };
  return `${JSON.stringify(manifest, null, 2)}\n`;
}
