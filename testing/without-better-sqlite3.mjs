// Loaded with `node --import` (NODE_OPTIONS) into a CLI process: the process then runs as on a PostgreSQL-only
// install, where the optional peer better-sqlite3 is not installed (docs/deployment.md "A PostgreSQL-only
// install"). Its resolution fails the way Node's own does for a package that is absent, so @svc/core takes the
// path it takes in such a project.
import { register } from 'node:module';

const hook = `
export async function resolve(specifier, context, next) {
  if (specifier === 'better-sqlite3' || specifier.startsWith('better-sqlite3/')) {
    const error = new Error("Cannot find package 'better-sqlite3' imported from " + context.parentURL);
    error.code = 'ERR_MODULE_NOT_FOUND';
    throw error;
  }
  return next(specifier, context);
}
`;
register(`data:text/javascript,${encodeURIComponent(hook)}`);
