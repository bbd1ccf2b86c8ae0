// Regenerates docs/configuration.md from the settings schema: `pnpm docs:config`.
import { writeFileSync } from 'node:fs';
import { renderConfigurationReference } from '../packages/core/src/kernel/config/reference.ts';

writeFileSync(new URL('../docs/configuration.md', import.meta.url), renderConfigurationReference());
console.log('docs/configuration.md written');
