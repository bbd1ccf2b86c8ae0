import {
  canonicalUuid,
  checkUsername,
  normaliseEmail,
  normaliseUsername,
  usernameLookupKeys,
} from './identity.js';

// The username rule of SPEC "User" ("trimmed and lower-cased; 3 to 150 characters; unique"), made to hold for
// every way of writing a name: what looks like one name in an admin list or an audit entry is one account.
describe('username rule', () => {
  it.each([
    ['  Alice ', 'alice'],
    ['ＡＤＭＩＮ', 'admin'], // full-width letters fold to ASCII (NFKC), so they name the existing admin
    ['ａｄｍｉｎ', 'admin'],
    ['ﬁnn', 'finn'], // ligature
    ['Ångström', 'ångström'],
    ['e\u0301mile', 'émile'], // a combining accent composes
    ['user\u00a0name', 'user name'], // no-break space becomes a space
    ['ΔΟΚΙΜΉ', 'δοκιμή'],
    ['Пользователь', 'пользователь'],
    ['山田太郎', '山田太郎'],
    ['やまだ_taro', 'やまだ_taro'], // Japanese with Latin: one writing system
    ['김민준', '김민준'],
    ['山田김', '山田김'], // Han with Hangul: one writing system (Korean)
    ['user_123-x.y@z', 'user_123-x.y@z'],
  ])('accepts %j as %j', (raw, expected) => {
    expect(checkUsername(raw)).toEqual({ username: expected, problem: null });
    expect(normaliseUsername(raw)).toBe(expected);
  });

  it.each([
    ['admin\u200b', 'characters', 'U+200B'], // zero-width space
    ['ad\u00admin', 'characters', 'U+00AD'], // soft hyphen
    ['\u202eadmin', 'characters', 'U+202E'], // right-to-left override
    ['adm\u2066in', 'characters', 'U+2066'], // bidi isolate
    ['admin\ufe0f', 'characters', 'U+FE0F'], // variation selector
    ['admin\u{e0061}', 'characters', 'U+E0061'], // tag character
    ['\u115fadmin', 'characters', 'U+115F'], // Hangul filler (a "letter" that renders as nothing)
    ['admin\u0085', 'characters', 'U+0085'], // C1 control
    ['admin\tx', 'characters', 'U+0009'],
    ['admin\ue000', 'characters', 'U+E000'], // private use
    ['admin\u{50000}', 'characters', 'U+50000'], // unassigned
    ['ad\u2028min', 'characters', 'U+2028'],
    ['ad\u1680min', 'characters', 'U+1680'], // Ogham space mark looks like a dash
    ['john  doe', 'characters', 'U+0020'], // two spaces render as one in HTML lists
  ])('refuses %j: %s (%s)', (raw, problem, character) => {
    expect(checkUsername(raw)).toMatchObject({ problem, character });
  });

  it.each([
    ['\u0430dmin', ['Cyrillic', 'Latin']], // Cyrillic а
    ['p\u0430yp\u0430l', ['Cyrillic', 'Latin']],
    ['\u03b1dmin', ['Greek', 'Latin']], // Greek alpha
    ['user\u0661\u0662', ['Arabic', 'Latin']], // Arabic-Indic digits
    ['admin\u0578', ['Armenian', 'Latin']],
    ['ㄅㄆ김', ['Bopomofo', 'Hangul']],
    ['かな김', ['Hangul', 'Hiragana']],
  ])('refuses %j for mixing scripts (%j)', (raw, scripts) => {
    expect(checkUsername(raw)).toMatchObject({ problem: 'mixed_scripts', scripts });
  });

  it('counts 3 to 150 characters (code points) after normalisation', () => {
    expect(checkUsername('ab').problem).toBe('length');
    expect(checkUsername('  ab  ').problem).toBe('length');
    expect(checkUsername('abc').problem).toBeNull();
    expect(checkUsername('a'.repeat(150)).problem).toBeNull();
    expect(checkUsername('a'.repeat(151)).problem).toBe('length');
    expect(checkUsername('𝒜'.repeat(150))).toEqual({ username: 'a'.repeat(150), problem: null });
    expect(checkUsername('山'.repeat(150)).problem).toBeNull();
    expect(checkUsername('\u{20000}'.repeat(150)).problem).toBeNull(); // astral Han: 300 UTF-16 units
  });

  it('looks a login name up as written first (names stored before the rule), then in its normal form', () => {
    expect(usernameLookupKeys(' Admin ')).toEqual(['admin']);
    expect(usernameLookupKeys('ＡＤＭＩＮ')).toEqual(['ａｄｍｉｎ', 'admin']);
    expect(usernameLookupKeys('admin\u200b')).toEqual(['admin\u200b']);
    expect(usernameLookupKeys('   ')).toEqual([]);
  });
});

describe('email and id helpers', () => {
  it('stores an email trimmed and as written; empty is none', () => {
    expect(normaliseEmail('  Alice@Example.com ')).toBe('Alice@Example.com');
    expect(normaliseEmail('  ')).toBeNull();
    expect(normaliseEmail(null)).toBeNull();
    expect(normaliseEmail(undefined)).toBeNull();
  });

  it('lower-cases a UUID in any letter case and rejects anything else', () => {
    expect(canonicalUuid('6F1C2A3B-4D5E-4F60-8A7B-9C0D1E2F3A4B')).toBe(
      '6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b',
    );
    expect(canonicalUuid('6f1c2a3b4d5e4f608a7b9c0d1e2f3a4b')).toBeNull();
    expect(canonicalUuid('not-a-uuid')).toBeNull();
  });
});
