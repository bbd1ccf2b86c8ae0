import { SettingsSchema, type SettingsInput } from '../kernel/config/schema.js';
import { ConfigError } from '../kernel/config/load.js';
import { relyingParty } from './relying-party.js';

const rpOf = (settings: Partial<SettingsInput>) => relyingParty(SettingsSchema.parse(settings));

describe('The relying party of the passkeys (SPEC-2 "Passkeys" settings)', () => {
  it('derives the rp id, name and origin from public_url and app_name by default', () => {
    expect(rpOf({ public_url: 'https://notes.example.com/app/', app_name: 'Notes' })).toEqual({
      id: 'notes.example.com',
      name: 'Notes',
      origins: ['https://notes.example.com'],
    });
  });

  it("falls back to the server's own address without public_url", () => {
    expect(rpOf({ host: 'localhost', port: 8443 })).toEqual({
      id: 'localhost',
      name: 'svc',
      origins: ['http://localhost:8443'],
    });
  });

  it('takes webauthn_rp_id, webauthn_rp_name and the webauthn_origins list as written, origins normalised', () => {
    expect(
      rpOf({
        public_url: 'https://notes.example.com',
        webauthn_rp_id: 'example.com',
        webauthn_rp_name: 'Example',
        webauthn_origins: 'https://app.example.com/, https://NOTES.example.com:443,android:apk-key-hash:abc',
      }),
    ).toEqual({
      id: 'example.com',
      name: 'Example',
      origins: ['https://app.example.com', 'https://notes.example.com', 'android:apk-key-hash:abc'],
    });
  });

  it('refuses an origin that is not one at start-up', () => {
    expect(() => rpOf({ webauthn_origins: 'https://' })).toThrow(ConfigError);
  });
});
