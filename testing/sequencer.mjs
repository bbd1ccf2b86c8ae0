// Jest runs the longest test files first so that its two workers finish together instead of one waiting for a
// slow file picked up last. Jest knows the durations only from its cache of an earlier run on the same
// machine, and CI starts from a clean checkout: there it fell back to file size, which put the packaging test
// (small file, minutes of npm installs) near the end. test/durations.json holds the durations of a full run
// (`node scripts/test-durations.mjs`); the local cache, when there is one, still wins.
import { readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Sequencer from '@jest/test-sequencer';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
/** @type {Record<string, number>} milliseconds per test file, relative to the repository */
const recorded = JSON.parse(readFileSync(resolve(ROOT, 'test/durations.json'), 'utf8'));

const Base = Sequencer.default ?? Sequencer;

export default class LongestFirst extends Base {
  time(test) {
    return super.time(test) ?? recorded[relative(ROOT, test.path)];
  }
}
