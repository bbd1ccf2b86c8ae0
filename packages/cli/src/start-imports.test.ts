import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { commands } from './commands/index.js';
import { CLI_DIR, REPO_DIR, cliInvocation, runCli } from '../../../testing/cli-process.js';

// docs/performance.md "The CLI's start": the top-level help is yargs and the list of commands, nothing else.
// No timing here: what is checked is which modules the process loads.

const dirs: string[] = [];

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A project folder whose main.ts would fail loudly if anything imported it. */
function project(): string {
  const dir = join(CLI_DIR, '.tmp-test', `start-${randomBytes(5).toString('hex')}`);
  mkdirSync(dir, { recursive: true });
  dirs.push(dir);
  writeFileSync(join(dir, 'main.ts'), "throw new Error('main.ts must not load for --help');\n");
  writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');
  return dir;
}

/** Runs `svc <args>` with testing/record-modules.mjs preloaded; resolves to its result and the modules it loaded. */
async function loadedBy(args: string[], cwd: string) {
  const file = join(cwd, 'modules.txt');
  const recorder = pathToFileURL(join(REPO_DIR, 'testing', 'record-modules.mjs')).href;
  const result = await runCli(args, {
    cwd,
    env: { NODE_OPTIONS: `--import ${recorder}`, RECORD_MODULES_FILE: file },
  });
  const modules = [...new Set(readFileSync(file, 'utf8').split('\n').filter(Boolean))];
  return { result, modules };
}

/** Packages the help must not load: svc's own (each command imports @svc/core), the drivers, DDL, the loader. */
const HEAVY = [
  '/packages/core/',
  '/packages/migrations/',
  '/drizzle-kit/',
  '/drizzle-orm/',
  '/postgres/',
  '/better-sqlite3/',
  '/express/',
];

/** Run from the sources, tsx and esbuild are the loader of the test itself; the built program must not load them. */
const LOADER = ['/tsx/', '/esbuild/'];

describe('what `svc --help` loads', () => {
  it('prints every command with its description and loads yargs, but no command module, @svc/core, driver or main.ts', async () => {
    const dir = project();
    const { result, modules } = await loadedBy(['--help'], dir);
    expect(result.code).toBe(0);
    for (const command of commands) {
      expect(result.stdout).toContain(`svc ${command.command}`);
      expect(result.stdout.replace(/\s+/g, ' ')).toContain(command.describe);
    }
    // The recorder saw the program's own modules: the list is not empty for want of recording.
    expect(modules.some((url) => url.includes('/yargs/'))).toBe(true);
    expect(modules.some((url) => /\/packages\/cli\/(dist|src)\/commands\/index\.(js|ts)$/.test(url))).toBe(
      true,
    );
    const builtProgram = cliInvocation().args[0]!.endsWith('bin.js');
    const forbidden = builtProgram ? [...HEAVY, ...LOADER] : HEAVY;
    expect(modules.filter((url) => forbidden.some((part) => url.includes(part)))).toEqual([]);
    expect(modules.filter((url) => /\/packages\/cli\/(dist|src)\/commands\/(?!index\.)/.test(url))).toEqual(
      [],
    );
    expect(modules.filter((url) => url.endsWith('/main.ts'))).toEqual([]);
  });

  it('loads no command module for a mistyped command either, and still suggests the right one', async () => {
    const dir = project();
    const { result, modules } = await loadedBy(['srve'], dir);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('svc: Did you mean serve?\n');
    expect(modules.filter((url) => /\/packages\/cli\/(dist|src)\/commands\/(?!index\.)/.test(url))).toEqual(
      [],
    );
  });

  it('loads only the command named: `svc users --help` imports users.ts, not the server or the migrations', async () => {
    const dir = project();
    const { result, modules } = await loadedBy(['users', '--help'], dir);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('svc users ls [filter]');
    expect(modules.some((url) => /\/commands\/users\.(js|ts)$/.test(url))).toBe(true);
    const others = modules.filter((url) => /\/commands\/(serve|dev|init|migrations)\.(js|ts)$/.test(url));
    expect(others).toEqual([]);
    expect(modules.filter((url) => url.includes('/drizzle-kit/') || url.endsWith('/main.ts'))).toEqual([]);
  });
});

describe('what a user command loads', () => {
  it('`svc users ls` reads the users through @svc/core/internal alone: no server, no feature routes, no logging, token, mail or socket library', async () => {
    const dir = join(CLI_DIR, '.tmp-test', `start-${randomBytes(5).toString('hex')}`);
    mkdirSync(dir, { recursive: true });
    dirs.push(dir);
    const init = await runCli(
      ['init', '--username', 'admin', '--password', 'start-imports-pw-1', '--base-dir', dir],
      {
        cwd: dir,
      },
    );
    expect(init.code).toBe(0);
    const { result, modules } = await loadedBy(['users', 'ls', '--base-dir', dir], dir);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('admin');
    // The recorder saw the command and the core: the list is not empty for want of recording.
    expect(modules.some((url) => /\/commands\/users\.(js|ts)$/.test(url))).toBe(true);
    expect(modules.some((url) => /\/packages\/core\/(dist|src)\/users\/manage\.(js|ts)$/.test(url))).toBe(
      true,
    );
    // docs/performance.md "The CLI's start": Express and createApp come with the public entry, the feature
    // modules' routes with `coreModules`; winston, jsonwebtoken, nodemailer and ws are loaded by what uses them.
    const heavy = [
      '/express/',
      '/winston/',
      '/jsonwebtoken/',
      '/nodemailer/',
      '/ws/',
      '/@asteasolutions/zod-to-openapi/',
      '/drizzle-kit/',
    ];
    expect(modules.filter((url) => heavy.some((part) => url.includes(part)))).toEqual([]);
    const core =
      /\/packages\/core\/(dist|src)\/(index|app\/create-app|app\/modules|kernel\/http\/server|[a-z-]+\/routes)\.(js|ts)$/;
    expect(modules.filter((url) => core.test(url))).toEqual([]);
  });
});

describe('the list of commands (commands/index.ts)', () => {
  it('shows for each command the same name and description as its module, which has no alias', async () => {
    for (const entry of commands) {
      const module = await entry.load();
      expect({ name: entry.name, command: module.command, describe: module.describe }).toEqual({
        name: entry.name,
        command: entry.command,
        describe: entry.describe,
      });
      expect(String(module.command).split(' ')[0]).toBe(entry.name);
      // The help line of a command carries its aliases and deprecation: the list would have to as well.
      expect(module.aliases).toBeUndefined();
      expect(module.deprecated).toBeUndefined();
    }
  });
});
