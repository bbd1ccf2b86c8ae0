// Regenerates docs/errors.md from the error registry and the English catalog:
//   pnpm --filter @svc/cli exec tsx ../../scripts/gen-errors-doc.mjs
import { writeFileSync } from 'node:fs';
import { ERROR_CODES } from '../packages/core/src/kernel/errors/codes.ts';
import { en } from '../packages/core/src/kernel/i18n/locales/en.ts';

const rows = Object.entries(ERROR_CODES)
  .sort(([a, x], [b, y]) => x.status - y.status || a.localeCompare(b))
  .map(
    ([code, spec]) =>
      `| ${spec.status} | \`${code}\` | \`${JSON.stringify(spec.loc ?? [])}\` | ${en[code] ?? ''} |`,
  );
const text = `# Errors

Every error answers with the uniform body \`{"detail": [{"loc", "msg", "type", "code", "params"?}]}\`
(SPEC "Errors"). \`code\` is stable: clients and frontends switch on it and may translate from it;
\`msg\` is translated by \`default_locale\` or, with \`use_accept_language\`, the \`Accept-Language\` header
(English and German ship). Every 401 carries \`WWW-Authenticate: Bearer\`; a 429 for a locked account
carries \`Retry-After\`. Validation errors list one item per field with \`type\` such as \`missing\`,
\`string_type\` or \`too_small\`; a value outside its bounds carries them in \`params\`: \`min\` or
\`max\` (a length for strings, a count for lists, the value for numbers), with \`inclusive: false\` for an
exclusive bound (\`gt\`, \`lt\`).

Codes are public API: they are added, never renamed or reused. This table is generated from
\`packages/core/src/kernel/errors/codes.ts\` (\`pnpm --filter @svc/cli exec tsx ../../scripts/gen-errors-doc.mjs\`); a test fails
when a code is missing here.

| status | code | default loc | English message |
|---|---|---|---|
${rows.join('\n')}

\`user.not_found\` answers 401 for the user of a token and 404 for admin lookups.
A request body is decoded by its \`Content-Encoding\` (gzip, deflate, br) before it is parsed: a body that does not
decode answers 400 \`request.invalid_encoding\`, an encoding the server does not know 415
\`request.unsupported_media_type\` with \`loc\` \`["header","Content-Encoding"]\`; the body limit applies to the decoded size.
Project code raises its own codes with \`throw new SvcError('notes.locked', { status: 409, message: '...' })\`.
`;
writeFileSync(new URL('../docs/errors.md', import.meta.url), text);
console.log(`docs/errors.md: ${Object.keys(ERROR_CODES).length} codes`);
