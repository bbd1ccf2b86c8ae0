import { ESLint } from 'eslint';

// ARCHITECTURE.md "Layers": the lint rules of eslint.config.js that keep the layering, checked on code placed at
// the paths it would have (ESLint lints the text as if it stood there; nothing is written).
const eslint = new ESLint({ cwd: process.cwd() });

/** The messages of the rules that keep the layering, for `code` placed at `filePath`. */
async function problems(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return result!.messages
    .filter((m) =>
      ['no-restricted-imports', '@typescript-eslint/no-explicit-any', 'svc/any-needs-reason'].includes(
        m.ruleId ?? '',
      ),
    )
    .map((m) => `${m.line}: ${m.ruleId}`);
}

const CORE = 'packages/core/src';

describe('layering in lint (eslint.config.js)', () => {
  it('refuses a feature in the kernel, the app in the kernel, and express, ws or a test helper there', async () => {
    const code = [
      "import '../auth/service.js';",
      "import '../app/modules.js';",
      "import 'express';",
      "import 'ws';",
      "import '../testing/each.js';",
      "import './ports.js';",
      'export {};',
    ].join('\n');
    expect(await problems(`${CORE}/kernel/probe.ts`, code)).toEqual([
      '1: no-restricted-imports',
      '2: no-restricted-imports',
      '3: no-restricted-imports',
      '4: no-restricted-imports',
      '5: no-restricted-imports',
    ]);
  });

  it('lets kernel/http import express, and nothing else', async () => {
    const code = ["import 'express';", "import '../../users/store.js';", "import 'ws';", 'export {};'].join(
      '\n',
    );
    expect(await problems(`${CORE}/kernel/http/probe.ts`, code)).toEqual([
      '2: no-restricted-imports',
      '3: no-restricted-imports',
    ]);
  });

  it('refuses another feature, kernel/http, express, ws and test helpers in a feature; its own folder and the kernel pass', async () => {
    const code = [
      "import '../mfa/service.js';",
      "import '../kernel/http/server.js';",
      "import 'express';",
      "import 'ws';",
      "import '../../../../testing/mfa.js';",
      "import './service.js';",
      "import '../kernel/ports.js';",
      'export {};',
    ].join('\n');
    expect(await problems(`${CORE}/auth/probe.ts`, code)).toEqual([
      '1: no-restricted-imports',
      '2: no-restricted-imports',
      '3: no-restricted-imports',
      '4: no-restricted-imports',
      '5: no-restricted-imports',
    ]);
  });

  it('lets events import ws', async () => {
    expect(await problems(`${CORE}/events/probe.ts`, "import 'ws';\nexport {};")).toEqual([]);
  });

  it('refuses express and the test helpers in the CLI', async () => {
    const code = "import 'express';\nimport '@svc/core/testing';\nexport {};";
    expect(await problems('packages/cli/src/probe.ts', code)).toEqual([
      '1: no-restricted-imports',
      '2: no-restricted-imports',
    ]);
  });

  it('refuses the server packages, Node built-ins, express, ws and test helpers in the client', async () => {
    const code = [
      "import '@svc/core';",
      "import '../../core/src/kernel/errors/codes.js';",
      "import 'node:crypto';",
      "import 'ws';",
      "import '../../../testing/client.js';",
      "import 'openapi-fetch';",
      "import './errors.js';",
      'export {};',
    ].join('\n');
    expect(await problems('packages/client/src/probe.ts', code)).toEqual([
      '1: no-restricted-imports',
      '2: no-restricted-imports',
      '3: no-restricted-imports',
      '4: no-restricted-imports',
      '5: no-restricted-imports',
    ]);
  });

  it('makes any an error outside tests unless the disable comment says why; tests may use it', async () => {
    const code = [
      'export const a: any = 1;',
      '// eslint-disable-next-line @typescript-eslint/no-explicit-any',
      'export const b: any = 1;',
      '// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a reason a reader can judge',
      'export const c: any = 1;',
    ].join('\n');
    expect(await problems(`${CORE}/users/probe.ts`, code)).toEqual([
      '1: @typescript-eslint/no-explicit-any',
      '2: svc/any-needs-reason',
    ]);
    expect(await problems(`${CORE}/users/probe.test.ts`, 'export const a: any = 1;')).toEqual([]);
  });
});
