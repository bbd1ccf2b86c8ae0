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
An invalid value stops the startup with one line naming the setting.

| setting | environment | type | default | constraint | meaning |
|---|---|---|---|---|---|
${rows.join('\n')}
`;
}
