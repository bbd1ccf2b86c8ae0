import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/**
 * What each published package lists in `pnpm pack --dry-run` (the files its tarball would hold) and what its
 * manifest says, without installing anything: no test file, no test helper (svc's own live in the repository's
 * testing/ folder; only the public `@svc/core/testing` entry ships), package metadata a registry page links
 * from, and declarations that name only packages the package itself brings. The install from the tarballs is
 * packaging.test.ts.
 */
const REPO = resolve(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '../..');
const PACKAGES = ['core', 'migrations', 'cli', 'client', 'react'] as const;
const REPOSITORY = 'https://github.com/svc-dev/svc';
/** The public entry of @svc/core for projects' tests (docs/getting-started.md "Test your routes"). */
const PUBLIC_TESTING = /^dist\/testing\/(index|each|test-app)\.(js|d\.ts)$/;

interface Manifest {
  name: string;
  homepage?: string;
  repository?: { type?: string; url?: string; directory?: string };
  bugs?: { url?: string };
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  devDependencies?: Record<string, string>;
}

function npx(args: string[], cwd: string): string {
  const result = spawnSync('npx', ['--yes', ...args], { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.status !== 0)
    throw new Error(`npx ${args.join(' ')} failed:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

const listings = new Map<string, string[]>();
const manifests = new Map<string, Manifest>();

beforeAll(() => {
  // CI builds before the tests (the README's test command); a tree never built is built here.
  if (!PACKAGES.every((name) => existsSync(join(REPO, 'packages', name, 'dist', 'index.js')))) {
    npx(['pnpm@10', 'build'], REPO);
  }
  // One recursive `pnpm pack --dry-run` lists the five packages (the same listing as `pnpm pack --dry-run` in
  // each package's folder): one npx and one pnpm start instead of five of each, seconds apiece.
  const filters = PACKAGES.flatMap((name) => ['--filter', `./packages/${name}`]);
  const packed = JSON.parse(
    npx(['pnpm@10', '--recursive', ...filters, 'pack', '--dry-run', '--json'], REPO),
  ) as {
    name: string;
    files: { path: string }[];
  }[];
  for (const name of PACKAGES) {
    const dir = join(REPO, 'packages', name);
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;
    const listing = packed.find((tarball) => tarball.name === manifest.name);
    if (!listing) throw new Error(`pnpm pack --recursive listed no ${manifest.name}`);
    listings.set(
      name,
      listing.files.map((file) => file.path),
    );
    manifests.set(name, manifest);
  }
}, 10 * 60_000);

describe.each(PACKAGES)('the @svc/%s tarball listing', (name) => {
  test('holds the built package and no test file, test helper, shared suite or source', () => {
    const files = listings.get(name)!;
    expect(files).toEqual(expect.arrayContaining(['package.json', 'README.md', 'LICENSE', 'dist/index.js']));
    if (name === 'core')
      expect(files).toEqual(
        expect.arrayContaining([
          'dist/console/index.html',
          'dist/console/console.js',
          'dist/console/console.css',
        ]),
      );
    const offending = files.filter(
      (file) =>
        /\.(test|spec)\.[cm]?[jt]s$/.test(file) ||
        /\.contract\./.test(file) ||
        /test-helpers?\./.test(file) ||
        /(^|\/)(__fixtures__|__tests__|fixtures)\//.test(file) ||
        ((/(^|\/)testing\//.test(file) || /(^|\/)testing\.[cm]?[jt]s$/.test(file)) &&
          !(name === 'core' && PUBLIC_TESTING.test(file))) ||
        /^(src|test|testing)\//.test(file) ||
        /\.map$|\.tsbuildinfo$/.test(file),
    );
    expect(offending).toEqual([]);
  });

  test('every listed module comes from a production source of the package', () => {
    for (const file of listings.get(name)!) {
      // SPEC-3 §6: @svc/core's admin console is one bundle esbuild builds from packages/core/console/src.
      if (name === 'core' && file.startsWith('dist/console/')) continue;
      const match = /^dist\/(.+)\.(js|d\.ts)$/.exec(file);
      if (!match) continue;
      const source = join(REPO, 'packages', name, 'src', `${match[1]}.ts`);
      expect({ file, sourceExists: existsSync(source) }).toEqual({ file, sourceExists: true });
    }
  });

  test('links its repository folder, home page and issue tracker', () => {
    const manifest = manifests.get(name)!;
    expect(manifest.repository).toEqual({
      type: 'git',
      url: `git+${REPOSITORY}.git`,
      directory: `packages/${name}`,
    });
    expect(manifest.homepage).toBe(`${REPOSITORY}/tree/main/packages/${name}#readme`);
    expect(manifest.bugs).toEqual({ url: `${REPOSITORY}/issues` });
  });

  test('its declarations name only node built-ins and packages it brings (or declares as peers)', () => {
    const manifest = manifests.get(name)!;
    const brought = new Set([
      manifest.name,
      ...Object.keys(manifest.dependencies ?? {}),
      ...Object.keys(manifest.optionalDependencies ?? {}),
      ...Object.keys(manifest.peerDependencies ?? {}).filter(
        (peer) => !manifest.peerDependenciesMeta?.[peer]?.optional,
      ),
    ]);
    const unbrought: string[] = [];
    for (const file of listings.get(name)!.filter((path) => path.endsWith('.d.ts'))) {
      const text = readFileSync(join(REPO, 'packages', name, file), 'utf8');
      for (const [, specifier] of text.matchAll(/(?:from\s+|import\()\s*['"]([^'"]+)['"]/g)) {
        if (specifier!.startsWith('.') || specifier!.startsWith('node:')) continue;
        const parts = specifier!.split('/');
        const pkg = specifier!.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
        const typesPkg = `@types/${pkg.replace(/^@/, '').replace('/', '__')}`;
        // Types come with the package, or from its @types package (which resolves even where an optional
        // peer such as better-sqlite3 is not installed).
        if ((brought.has(pkg) && !shipsNoTypes(pkg)) || brought.has(typesPkg)) continue;
        unbrought.push(`${file}: ${specifier}`);
      }
    }
    expect(unbrought).toEqual([]);
  });
});

/** Packages whose types come from DefinitelyTyped (`@types/<name>`), not from the package itself. */
function shipsNoTypes(pkg: string): boolean {
  const manifest = join(REPO, 'packages', 'core', 'node_modules', pkg, 'package.json');
  const cli = join(REPO, 'packages', 'cli', 'node_modules', pkg, 'package.json');
  const path = existsSync(manifest) ? manifest : cli;
  if (!existsSync(path)) return false;
  const json = JSON.parse(readFileSync(path, 'utf8')) as {
    types?: string;
    typings?: string;
    exports?: unknown;
  };
  if (json.types || json.typings) return false;
  if (JSON.stringify(json.exports ?? {}).includes('.d.')) return false;
  // TypeScript also finds a declaration file beside the entry that `exports` names (`esm/index.js` →
  // `esm/index.d.ts`), as @simplewebauthn/server ships its types.
  const root = (json.exports as Record<string, unknown> | undefined)?.['.'];
  const entry =
    typeof root === 'string' ? root : ((root as Record<string, unknown> | undefined)?.import as string);
  if (typeof entry !== 'string') return true;
  return !existsSync(join(dirname(path), entry.replace(/\.(c|m)?js$/, '.d.ts')));
}

describe('dependencies of @svc/core', () => {
  test('better-sqlite3 (compiled at install) is an optional peer; build tools are no run-time dependency', () => {
    const core = manifests.get('core')!;
    // A PostgreSQL-only project installs no native SQLite driver; npm installs no optional peer by itself.
    expect(core.peerDependenciesMeta?.['better-sqlite3']).toEqual({ optional: true });
    for (const manifest of manifests.values()) {
      expect(manifest.dependencies ?? {}).not.toHaveProperty('better-sqlite3');
      expect(manifest.optionalDependencies ?? {}).not.toHaveProperty('better-sqlite3');
    }
    for (const tool of ['drizzle-kit', 'esbuild', 'tsx', 'typescript']) {
      expect(core.dependencies).not.toHaveProperty(tool);
    }
    // drizzle-kit is an optional peer: a project that makes revisions has it through @svc/migrations.
    expect(core.peerDependenciesMeta?.['drizzle-kit']).toEqual({ optional: true });
    expect(manifests.get('migrations')!.dependencies).toHaveProperty('drizzle-kit');
  });
});
