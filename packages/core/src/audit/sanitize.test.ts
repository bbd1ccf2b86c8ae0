import { pathFragments, renderLogAs, sanitizeText } from './sanitize.js';

describe('sanitizeText (SPEC "Activity log recording rules" 6)', () => {
  it('replaces C0, DEL, C1, U+2028 and U+2029 by spaces', () => {
    expect(sanitizeText('a\u0000b\tc\nd\u001fe\u007ff\u0085g\u009fh\u2028i\u2029j', 500)).toBe(
      'a b c d e f g h i j',
    );
  });

  it('keeps text at the limit and cuts longer text to the limit, ending with an ellipsis', () => {
    expect(sanitizeText('x'.repeat(150), 150)).toBe('x'.repeat(150));
    const cut = sanitizeText('y'.repeat(151), 150);
    expect(Array.from(cut)).toHaveLength(150);
    expect(cut).toBe(`${'y'.repeat(149)}…`);
  });

  it('counts characters, not UTF-16 units, and never splits a surrogate pair', () => {
    const emoji = '😀'.repeat(10); // 20 UTF-16 units, 10 characters
    expect(sanitizeText(emoji, 10)).toBe(emoji);
    expect(sanitizeText(emoji, 5)).toBe(`${'😀'.repeat(4)}…`);
  });
});

describe('renderLogAs (SPEC "Route protection rules" 5)', () => {
  it('fills path parameters and the acting username, leaving unknown placeholders untouched', () => {
    expect(renderLogAs('archived {noteId} by {username} {unknown} {}', { noteId: '7' }, 'alice')).toBe(
      'archived 7 by alice {unknown} {}',
    );
  });

  it('keeps {username} as written for an anonymous request', () => {
    expect(renderLogAs('posted by {username}', {}, null)).toBe('posted by {username}');
  });

  it('uses the acting user for {username} even when a path parameter has that name', () => {
    expect(renderLogAs('{username}', { username: 'bob' }, 'alice')).toBe('alice');
  });
});

describe('pathFragments', () => {
  it('splits on commas, trims and drops empty fragments', () => {
    expect(pathFragments(' refresh-token, ,/secret ,')).toEqual(['refresh-token', '/secret']);
    expect(pathFragments('')).toEqual([]);
    expect(pathFragments(undefined)).toEqual([]);
  });
});
