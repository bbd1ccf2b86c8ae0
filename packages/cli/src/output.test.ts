import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { baseDirOfArgv, logFormatOf } from './output.js';
import { CLI_DIR } from '../../../testing/cli-process.js';

const dirs: string[] = [];

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function project(files: Record<string, string>): string {
  const dir = join(CLI_DIR, '.tmp-test', `output-${randomBytes(5).toString('hex')}`);
  mkdirSync(dir, { recursive: true });
  dirs.push(dir);
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  return dir;
}

describe('the format of the CLI\'s own lines (SPEC "Startup rules" 5)', () => {
  it('reads log_format from the environment over .env over svc.yaml, like every setting', () => {
    const dir = project({ 'svc.yaml': 'log_format: json\n' });
    expect(logFormatOf(dir, {})).toBe('json');
    writeFileSync(join(dir, '.env'), 'SVC_LOG_FORMAT=text\n');
    expect(logFormatOf(dir, {})).toBe('text');
    expect(logFormatOf(dir, { SVC_LOG_FORMAT: 'json' })).toBe('json');
    expect(logFormatOf(project({}), {})).toBe('text');
  });

  it('still finds json when other settings are invalid, and says text when log_format itself is', () => {
    const dir = project({ 'svc.yaml': 'log_format: json\nlog_level: verbose\nport: many\n' });
    expect(logFormatOf(dir, {})).toBe('json');
    expect(logFormatOf(dir, { SVC_LOG_FORMAT: 'xml' })).toBe('text');
  });

  it('takes the project directory from --base-dir in either spelling, before or after the command', () => {
    expect(baseDirOfArgv(['serve'])).toBe('.');
    expect(baseDirOfArgv(['--base-dir', 'api', 'serve'])).toBe('api');
    expect(baseDirOfArgv(['serve', '--base-dir=api', '--port', '9000'])).toBe('api');
    expect(baseDirOfArgv(['serve', '--baseDir', 'api'])).toBe('api');
    expect(baseDirOfArgv(['users', 'create', '--', '--base-dir', 'x'])).toBe('.');
  });
});
