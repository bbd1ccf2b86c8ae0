import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { codeFrame } from './code-frame.js';
import { ConfigError, acceptedValuesOf, findSettingTypos, loadSettings, settingTypoMessage } from './load.js';

const KEY = 'k'.repeat(40);

/** The ConfigError `fn` throws (fails the test when it throws nothing or something else). */
function configErrorOf(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('configuration errors say where (docs/configuration.md "When a value is refused")', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-config-errors-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('reports a YAML syntax error with file, line, column, reason and a code frame', () => {
    writeFileSync(join(dir, 'svc.yaml'), 'port: 8000\nhost: [x\n  y: 1\nlog_format: text\n');
    const error = configErrorOf(() => loadSettings({ baseDir: dir, env: { SVC_SECRET_KEY: KEY } }));
    const [first, ...frame] = error.message.split('\n');
    expect(first).toMatch(/svc\.yaml:3:4: invalid YAML: missed comma between flow collection entries$/);
    expect(error.location).toMatchObject({ line: 3, column: 4 });
    expect(error.location!.file).toMatch(/svc\.yaml$/);
    expect(frame).toEqual([
      '  1 | port: 8000',
      '  2 | host: [x',
      '> 3 |   y: 1',
      '    |    ^',
      '  4 | log_format: text',
    ]);
  });

  it('reports a syntax error in the file named by SVC_CONFIG_FILE, and a missing one by name', () => {
    writeFileSync(join(dir, 'other.yml'), 'a: b: c\n');
    const error = configErrorOf(() =>
      loadSettings({ baseDir: dir, env: { SVC_SECRET_KEY: KEY, SVC_CONFIG_FILE: 'other.yml' } }),
    );
    expect(error.message).toMatch(/other\.yml:1:5: invalid YAML: /);
    expect(() =>
      loadSettings({ baseDir: dir, env: { SVC_SECRET_KEY: KEY, SVC_CONFIG_FILE: 'missing.yaml' } }),
    ).toThrow(/missing\.yaml named by SVC_CONFIG_FILE does not exist/);
  });

  it.each([
    ['the environment', { env: { SVC_PORT: '70000' } }, /in the environment \(SVC_PORT\)/],
    ['.env', { dotenv: 'SVC_PORT=70000\n' }, /in \.env \(SVC_PORT\)/],
    ['svc.yaml', { yaml: 'port: 70000\n' }, /in \S*svc\.yaml:/],
    ['createApp({ settings })', { overrides: { port: 70000 } }, /in createApp\(\{ settings \}\)/],
  ])('names %s as the source of a bad value and the accepted range', (_name, sources, where) => {
    const { env, dotenv, yaml, overrides } = sources as {
      env?: Record<string, string>;
      dotenv?: string;
      yaml?: string;
      overrides?: Record<string, unknown>;
    };
    if (dotenv) writeFileSync(join(dir, '.env'), dotenv);
    if (yaml) writeFileSync(join(dir, 'svc.yaml'), yaml);
    const error = configErrorOf(() =>
      loadSettings({ baseDir: dir, env: { SVC_SECRET_KEY: KEY, ...env }, overrides }),
    );
    expect(error.message).toMatch(/^invalid setting 'port' /);
    expect(error.message).toMatch(where);
    expect(error.message).toMatch(/: must be an integer from 1 to 65535$/);
  });

  it('names the source that wins: the environment over .env over svc.yaml', () => {
    writeFileSync(join(dir, 'svc.yaml'), 'auth_rate_limit: 5\n');
    writeFileSync(join(dir, '.env'), 'SVC_AUTH_RATE_LIMIT=20000\n');
    expect(() => loadSettings({ baseDir: dir, env: { SVC_SECRET_KEY: KEY } })).toThrow(
      "invalid setting 'auth_rate_limit' in .env (SVC_AUTH_RATE_LIMIT): must be an integer from 0 to 10000",
    );
    // A good exported value hides the bad one in .env.
    expect(
      loadSettings({ baseDir: dir, env: { SVC_SECRET_KEY: KEY, SVC_AUTH_RATE_LIMIT: '7' } }).auth_rate_limit,
    ).toBe(7);
  });

  it.each([
    ['access_token_expire_minutes', 'an integer of at least 1'],
    ['db_pool_recycle', 'an integer of at least -1'],
    ['algorithm', 'one of HS256, HS384, HS512'],
    ['log_level', 'one of (empty), CRITICAL, ERROR, WARNING, INFO, DEBUG'],
    ['debug', 'true or false (also 1/0, yes/no, on/off)'],
    ['disable_routes', 'a list of strings or a comma-separated string'],
  ])('says what %s accepts', (key, accepted) => {
    expect(acceptedValuesOf(key)).toBe(accepted);
  });

  it('keeps the rule of a setting checked by its own test (a URL scheme) and never shows the value', () => {
    const error = configErrorOf(() =>
      loadSettings({ baseDir: dir, env: { SVC_SECRET_KEY: KEY, SVC_CACHE_URL: 'http://user:hunter2@x' } }),
    );
    expect(error.message).toBe(
      "invalid setting 'cache_url' in the environment (SVC_CACHE_URL): must be empty or start with redis://, rediss:// or unix://",
    );
  });

  it('says that a short secret key comes from the exported variable, which wins over .env', () => {
    writeFileSync(join(dir, '.env'), `SVC_SECRET_KEY=${KEY}\n`);
    const error = configErrorOf(() => loadSettings({ baseDir: dir, env: { SVC_SECRET_KEY: 'short' } }));
    expect(error.message).toBe(
      'secret_key is too short (5 characters) in the environment (SVC_SECRET_KEY): it needs at least 32; the exported variable wins over .env: unset it or export a longer key',
    );
    expect(error.message).not.toContain('\n');
  });

  it('says that a short secret key comes from .env when nothing is exported', () => {
    writeFileSync(join(dir, '.env'), 'SVC_SECRET_KEY=short\n');
    expect(() => loadSettings({ baseDir: dir, env: {} })).toThrow(
      'secret_key is too short (5 characters) in .env (SVC_SECRET_KEY): it needs at least 32',
    );
  });
});

describe('setting names close to a known one (docs/configuration.md "Typos")', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-config-typos-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('finds typos in svc.yaml, .env and the environment, spelled as each source spells them', () => {
    writeFileSync(join(dir, 'svc.yaml'), 'acess_token_expire_minutes: 5\nmy_project_flag: yes\nport: 8001\n');
    writeFileSync(join(dir, '.env'), `SVC_SECRET_KEY=${KEY}\nSVC_ACESS_TOKEN_EXPIRE_MINUTES=5\n`);
    const typos = findSettingTypos({
      baseDir: dir,
      env: { SVC_PROT: '9000', SVC_HOST: '0.0.0.0', SVC_TEST_POSTGRES_URL: 'x', HOME: '/root' },
    });
    expect(typos).toEqual([
      {
        name: 'acess_token_expire_minutes',
        source: expect.stringMatching(/svc\.yaml$/),
        suggestions: ['access_token_expire_minutes'],
      },
      {
        name: 'SVC_ACESS_TOKEN_EXPIRE_MINUTES',
        source: '.env',
        suggestions: ['SVC_ACCESS_TOKEN_EXPIRE_MINUTES'],
      },
      { name: 'SVC_PROT', source: 'the environment', suggestions: ['SVC_PORT'] },
    ]);
    expect(settingTypoMessage(typos[2]!)).toBe(
      'unknown setting SVC_PROT in the environment: did you mean SVC_PORT? (unknown settings are allowed but svc does not use them)',
    );
    expect(settingTypoMessage(typos[0]!)).toMatch(
      /^unknown setting 'acess_token_expire_minutes' in \S*svc\.yaml: did you mean 'access_token_expire_minutes'\?/,
    );
  });

  it('names every equally close setting and leaves the start alone', () => {
    writeFileSync(join(dir, 'svc.yaml'), 'port: 8000\n');
    const env = { SVC_SECRET_KEY: KEY, SVC_POST: '1', SVC_CONFIG_FILE: 'svc.yaml' };
    expect(findSettingTypos({ baseDir: dir, env })).toEqual([
      { name: 'SVC_POST', source: 'the environment', suggestions: ['SVC_HOST', 'SVC_PORT'] },
    ]);
    // SPEC "Configuration": unknown keys are allowed; the typo never stops the start.
    expect(loadSettings({ baseDir: dir, env }).port).toBe(8000);
  });

  it('counts extra names as known (a project reading its own keys)', () => {
    expect(findSettingTypos({ baseDir: dir, env: { SVC_PROT: '1' }, knownNames: ['prot'] })).toEqual([]);
  });
});

describe('code frame', () => {
  it('marks the line and column and keeps long lines readable around the column', () => {
    const long = 'x'.repeat(300) + 'ERR' + 'y'.repeat(300);
    const frame = codeFrame(`a\n${long}\nb`, 2, 301).split('\n');
    expect(frame[0]).toBe('  1 | a');
    expect(frame[1]!.startsWith('> 2 | …')).toBe(true);
    const caret = frame[2]!.indexOf('^');
    expect(frame[1]!.slice(caret, caret + 3)).toBe('ERR');
  });
});
