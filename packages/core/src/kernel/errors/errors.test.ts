import { readFileSync } from 'node:fs';
import { ERROR_CODES } from './codes.js';
import { de } from '../i18n/locales/de.js';
import { en } from '../i18n/locales/en.js';
import { SvcError } from './svc-error.js';

const codes = Object.keys(ERROR_CODES);
const docs = readFileSync(new URL('../../../../../docs/errors.md', import.meta.url), 'utf8');

describe('error code registry', () => {
  it.each([
    ['en', en],
    ['de', de],
  ])('has a %s message for every code', (_lang, catalog) => {
    expect(codes.filter((code) => !(code in catalog))).toEqual([]);
  });

  it('has no error message without a code', () => {
    const messageCodes = Object.keys(en).filter(
      (key) => /^[a-z_]+\.[a-z_]+$/.test(key) && !key.startsWith('settings.'),
    );
    const orphans = messageCodes.filter(
      (key) => !(key in ERROR_CODES) && /^(auth|user|mfa|db|access|request|server|health|cache)\./.test(key),
    );
    expect(orphans).toEqual([]);
  });

  it('lists every code in docs/errors.md with its status', () => {
    const missing = codes.filter(
      (code) => !docs.includes(`| ${ERROR_CODES[code as keyof typeof ERROR_CODES].status} | \`${code}\` |`),
    );
    expect(missing).toEqual([]);
  });

  it('gives SvcError the registry status and loc, and lets a call override them', () => {
    const error = new SvcError('auth.invalid_credentials');
    expect([error.status, error.loc, error.type]).toEqual([401, ['body', 'username'], 'value_error']);
    const notFound = new SvcError('user.not_found', { status: 404, loc: ['path', 'user_id'] });
    expect([notFound.status, notFound.loc]).toEqual([404, ['path', 'user_id']]);
    expect(new SvcError('project.custom').status).toBe(400);
  });
});
