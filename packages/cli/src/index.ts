export { run } from './main.js';
export { CliError } from './errors.js';
