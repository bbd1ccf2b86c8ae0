import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadSettings } from './load.js';

const KEY = 'k'.repeat(40);

describe('settings loading', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-config-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('gives every setting its SPEC default', () => {
    const s = loadSettings({ baseDir: dir, env: { SVC_SECRET_KEY: KEY } });
    expect(s).toMatchObject({
      access_token_expire_minutes: 30,
      algorithm: 'HS256',
      auth_rate_limit: 0,
      auth_rate_window_seconds: 60,
      cache_max_entries: 10000,
      cache_prefix: 'svc:',
      db_pool_size: 5,
      db_max_overflow: 10,
      db_pool_timeout: 30,
      db_pool_recycle: 1800,
      default_locale: 'en',
      docs_enabled: true,
      envelope_enabled: true,
      events_ticket_store: 'database',
      host: '127.0.0.1',
      log_format: 'text',
      log_level: '',
      login_lockout_minutes: 15,
      login_max_attempts: 5,
      mfa_max_attempts: 5,
      mfa_otp_expire_minutes: 10,
      mfa_send_cooldown_seconds: 30,
      password_min_length: 12,
      port: 8000,
      refresh_reuse_grace_seconds: 10,
      refresh_token_expire_days: 7,
      refresh_token_rotation: true,
      registration_enabled: false,
      request_id_enabled: true,
      table_prefix: 'svc_',
      activity_log_exclude_paths: 'refresh-token',
      disable_routes: [],
    });
  });

  it('lets environment and .env win over the YAML file', () => {
    writeFileSync(
      join(dir, 'svc.yaml'),
      'port: 9001\nhost: 0.0.0.0\napp_name: FromYaml\nlogin_max_attempts: 3\n',
    );
    writeFileSync(join(dir, '.env'), `SVC_SECRET_KEY=${KEY}\nSVC_PORT=9002\nSVC_APP_NAME=FromDotenv\n`);
    const s = loadSettings({ baseDir: dir, env: { SVC_PORT: '9003' } });
    expect(s.port).toBe(9003); // environment
    expect(s.app_name).toBe('FromDotenv'); // .env over YAML
    expect(s.host).toBe('0.0.0.0'); // YAML over default
    expect(s.login_max_attempts).toBe(3);
  });

  it('reads svc.yml and SVC_CONFIG_FILE', () => {
    writeFileSync(join(dir, 'svc.yml'), 'app_name: Yml\n');
    expect(loadSettings({ baseDir: dir, env: { SVC_SECRET_KEY: KEY } }).app_name).toBe('Yml');
    writeFileSync(join(dir, 'other.yaml'), 'app_name: Other\n');
    expect(
      loadSettings({ baseDir: dir, env: { SVC_SECRET_KEY: KEY, SVC_CONFIG_FILE: 'other.yaml' } }).app_name,
    ).toBe('Other');
  });

  it('allows unknown keys', () => {
    writeFileSync(join(dir, 'svc.yaml'), 'my_project_flag: yes\n');
    const s = loadSettings({ baseDir: dir, env: { SVC_SECRET_KEY: KEY, SVC_OTHER_THING: 'x' } });
    expect((s as Record<string, unknown>).my_project_flag).toBe('yes');
  });

  it('accepts list settings as a list or a comma-separated string', () => {
    writeFileSync(join(dir, 'svc.yaml'), 'disable_routers: [a, b]\nevents_public_types: login\n');
    const s = loadSettings({
      baseDir: dir,
      env: { SVC_SECRET_KEY: KEY, SVC_DISABLE_ROUTES: 'GET /x, /y ,' },
    });
    expect(s.disable_routers).toEqual(['a', 'b']);
    expect(s.disable_routes).toEqual(['GET /x', '/y']);
    expect(s.events_public_types).toEqual(['login']);
  });

  it.each(['secret_key', 'mfa_encryption_key', 'database_url', 'auth_database_url'])(
    'refuses the secret %s in the YAML file, naming it',
    (key) => {
      writeFileSync(join(dir, 'svc.yaml'), `${key}: something-secret-value\n`);
      expect(() => loadSettings({ baseDir: dir, env: { SVC_SECRET_KEY: KEY } })).toThrow(
        new RegExp(`'${key}' is a secret`),
      );
    },
  );

  it('refuses a missing or short secret key with one line', () => {
    expect(() => loadSettings({ baseDir: dir, env: {} })).toThrow(ConfigError);
    expect(() => loadSettings({ baseDir: dir, env: {} })).toThrow(/secret_key is not set/);
    expect(() => loadSettings({ baseDir: dir, env: { SVC_SECRET_KEY: 'short' } })).toThrow(/too short/);
    try {
      loadSettings({ baseDir: dir, env: { SVC_SECRET_KEY: 'x'.repeat(31) } });
    } catch (error) {
      expect((error as Error).message).not.toContain('\n');
    }
    expect(loadSettings({ baseDir: dir, env: { SVC_SECRET_KEY: 'x'.repeat(32) } }).secret_key).toHaveLength(
      32,
    );
  });

  it('accepts log levels case-insensitively and refuses others', () => {
    expect(
      loadSettings({ baseDir: dir, env: { SVC_SECRET_KEY: KEY, SVC_LOG_LEVEL: 'warning' } }).log_level,
    ).toBe('WARNING');
    expect(() => loadSettings({ baseDir: dir, env: { SVC_SECRET_KEY: KEY, SVC_LOG_LEVEL: 'loud' } })).toThrow(
      /invalid setting 'log_level'/,
    );
  });

  it.each([
    ['SVC_ALGORITHM', 'RS256', 'algorithm'],
    ['SVC_ACCESS_TOKEN_EXPIRE_MINUTES', '0', 'access_token_expire_minutes'],
    ['SVC_AUTH_RATE_LIMIT', '10001', 'auth_rate_limit'],
    ['SVC_PORT', '70000', 'port'],
    ['SVC_CACHE_URL', 'http://x', 'cache_url'],
    ['SVC_DEFAULT_LOCALE', 'english!', 'default_locale'],
    ['SVC_DB_POOL_SIZE', '0', 'db_pool_size'],
    ['SVC_MFA_SEND_COOLDOWN_SECONDS', '3601', 'mfa_send_cooldown_seconds'],
    ['SVC_EVENTS_TICKET_STORE', 'disk', 'events_ticket_store'],
  ])('refuses %s=%s naming the setting', (env, value, key) => {
    expect(() => loadSettings({ baseDir: dir, env: { SVC_SECRET_KEY: KEY, [env]: value } })).toThrow(
      new RegExp(`'${key}'`),
    );
  });

  it('parses booleans from the usual spellings', () => {
    const s = loadSettings({
      baseDir: dir,
      env: { SVC_SECRET_KEY: KEY, SVC_DEBUG: 'yes', SVC_DOCS_ENABLED: '0', SVC_MFA_ENABLED: 'TRUE' },
    });
    expect([s.debug, s.docs_enabled, s.mfa_enabled]).toEqual([true, false, true]);
  });
});
