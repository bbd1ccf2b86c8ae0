import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const here = dirname(fileURLToPath(import.meta.url));

/**
 * The types promised to handlers (API "defineRouter"): a non-null `ctx.user` unless the route or router is
 * public, `ctx.params` from the path when no schema is given, typed createApp options. Compiles a fixture
 * whose wrong lines carry `@ts-expect-error`, so both a lost guarantee and a lost refusal fail.
 */
describe('route and app option types', () => {
  it('compile as the fixture expects', () => {
    const fixture = join(here, '__fixtures__', 'route-types.ts');
    const config = ts.readConfigFile(join(here, '../../../../tsconfig.base.json'), ts.sys.readFile);
    const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, join(here, '../../../..'));
    const program = ts.createProgram([fixture], {
      ...parsed.options,
      noEmit: true,
      composite: false,
      incremental: false,
      types: ['node'],
    });
    // The fixture's own diagnostics (a lost guarantee, an unused @ts-expect-error) and the program's global and
    // option ones: checking every other file the fixture imports (all of @svc/core's sources) took most of this
    // test's 20 s, and those files are type-checked by the build (`tsc -b`) and `pnpm typecheck` anyway.
    const source = program.getSourceFile(fixture)!;
    const diagnostics = [
      ...program.getOptionsDiagnostics(),
      ...program.getGlobalDiagnostics(),
      ...program.getSyntacticDiagnostics(source),
      ...program.getSemanticDiagnostics(source),
    ].map((d) => {
      const where = d.file
        ? `${d.file.fileName}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}`
        : '';
      return `${where} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
    });
    expect(diagnostics).toEqual([]);
  }, 120_000);
});
