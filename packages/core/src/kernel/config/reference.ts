import { SETTING_DESCRIPTIONS } from './descriptions.js';
import { SettingsSchema } from './schema.js';

function typeOf(value: unknown): string {
  if (Array.isArray(value)) return 'list';
  if (typeof value === 'number') return 'integer';
  return typeof value;
}

function shown(value: unknown): string {
  if (Array.isArray(value)) return value.length ? value.join(', ') : 'empty';
  if (value === '') return 'empty';
  return `\`${String(value)}\``;
}

/** The configuration reference (Markdown), generated from the settings schema and its descriptions. */
export function renderConfigurationReference(): string {
  const defaults = SettingsSchema.parse({}) as Record<string, unknown>;
  const keys = Object.keys(SettingsSchema.shape).sort();
  const rows = keys.map((key) => {
    const doc = SETTING_DESCRIPTIONS[key] ?? { meaning: '' };
    return `| \`${key}\` | \`SVC_${key.toUpperCase()}\` | ${typeOf(defaults[key])} | ${shown(defaults[key])} | ${doc.constraint ?? ''} | ${doc.meaning} |`;
  });
  return `# Configuration reference

Generated from \`packages/core/src/kernel/config/schema.ts\` (\`pnpm docs:config\`); a test fails when it is stale.

Settings are read, lowest priority first, from \`svc.yaml\` / \`svc.yml\` in the project directory (or the file
named by \`SVC_CONFIG_FILE\`), \`.env\` in the project directory, the environment (\`SVC_<NAME>\`), and the
options given to \`createApp({ settings })\`. Unknown keys are allowed. The secrets \`secret_key\`,
\`mfa_encryption_key\`, \`database_url\` and \`auth_database_url\` are refused in the YAML file. List settings
accept a YAML list or a comma-separated string. Booleans accept \`true/false\`, \`1/0\`, \`yes/no\`, \`on/off\`.

## When a value is refused

An invalid value stops the startup with one line naming the setting, the source its value came from (the one
that wins when several set it: the environment, \`.env\`, \`svc.yaml\`, the command line or
\`createApp({ settings })\`) and what the setting accepts (the constraint column below). The value itself is
not shown. A \`svc.yaml\` that is not valid YAML is reported with its line and column and a code frame
([cli.md](cli.md#errors)).

\`\`\`
svc: invalid setting 'port' in the environment (SVC_PORT): must be an integer from 1 to 65535
svc: secret_key is too short (9 characters) in the environment (SVC_SECRET_KEY): it needs at least 32; the exported variable wins over .env: unset it or export a longer key
\`\`\`

## Typos in setting names

Unknown keys are allowed (a project may read its own), so a misspelt setting would silently do nothing.
\`svc serve\` and \`svc dev\` therefore warn once at start-up about each name in \`svc.yaml\`, \`.env\` or the
environment that is no setting but close to one (a letter or two off, or two letters swapped; more for long
names), and start anyway. Names far from every setting are taken for the project's own and not reported.

\`\`\`
svc: warning: unknown setting 'acess_token_expire_minutes' in svc.yaml: did you mean 'access_token_expire_minutes'? (unknown settings are allowed but svc does not use them)
svc: warning: unknown setting SVC_ACESS_TOKEN_EXPIRE_MINUTES in .env: did you mean SVC_ACCESS_TOKEN_EXPIRE_MINUTES? (unknown settings are allowed but svc does not use them)
svc: warning: unknown setting SVC_PROT in the environment: did you mean SVC_PORT? (unknown settings are allowed but svc does not use them)
\`\`\`

## Settings

| setting | environment | type | default | constraint | meaning |
|---|---|---|---|---|---|
${rows.join('\n')}
`;
}
