import { readFileSync } from 'node:fs';
import { SETTING_DESCRIPTIONS } from './descriptions.js';
import { renderConfigurationReference } from './reference.js';
import { SettingsSchema } from './schema.js';

describe('configuration reference', () => {
  it('describes every setting of the schema', () => {
    const missing = Object.keys(SettingsSchema.shape).filter((key) => !SETTING_DESCRIPTIONS[key]);
    expect(missing).toEqual([]);
  });

  it('is up to date in docs/configuration.md (run `pnpm docs:config`)', () => {
    const onDisk = readFileSync(new URL('../../../../../docs/configuration.md', import.meta.url), 'utf8');
    expect(onDisk).toBe(renderConfigurationReference());
  });
});
