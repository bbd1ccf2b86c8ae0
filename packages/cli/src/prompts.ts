import { createInterface, type Interface } from 'node:readline';
import { CliError } from './errors.js';

// Prompts of the commands that ask for a password or a confirmation (`svc users`, `svc init`): hidden input on
// a terminal; one line per prompt from a pipe (scripts and tests). Prompts go to stderr, so stdout keeps only
// the command's result.

let lineReader: { rl: Interface; lines: AsyncIterator<string> } | undefined;

/** Releases standard input after the last prompt, so the process can exit. */
export function closePrompts(): void {
  lineReader?.rl.close();
  lineReader = undefined;
}

async function readPipedLine(prompt: string): Promise<string> {
  process.stderr.write(prompt);
  if (!lineReader) {
    const rl = createInterface({ input: process.stdin, terminal: false });
    lineReader = { rl, lines: rl[Symbol.asyncIterator]() };
  }
  const next = await lineReader.lines.next();
  process.stderr.write('\n');
  if (next.done) throw new CliError('no answer: standard input ended before the prompt was answered');
  return next.value;
}

/** Reads one line from the terminal without echo. Ctrl-C aborts (exit 130). */
function readHiddenFromTty(prompt: string): Promise<string> {
  const stdin = process.stdin;
  process.stderr.write(prompt);
  return new Promise((resolvePromise, reject) => {
    let value = '';
    const finish = () => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write('\n');
    };
    const onData = (chunk: Buffer | string) => {
      for (const ch of chunk.toString('utf8')) {
        if (ch === '\r' || ch === '\n') {
          finish();
          resolvePromise(value);
          return;
        }
        if (ch === '\u0003' || (ch === '\u0004' && value === '')) {
          finish();
          reject(new CliError('aborted', 130));
          return;
        }
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else if (ch >= ' ') value += ch;
      }
    };
    stdin.setRawMode(true);
    stdin.resume();
    stdin.on('data', onData);
  });
}

/** One secret line: hidden on a terminal, read as a line from a pipe. */
export function readSecret(prompt: string): Promise<string> {
  return process.stdin.isTTY ? readHiddenFromTty(prompt) : readPipedLine(prompt);
}

/** SPEC "Command-line interface": a missing `--password` is prompted, hidden and confirmed. */
export async function promptNewPassword(label = 'Password'): Promise<string> {
  const password = await readSecret(`${label}: `);
  const again = await readSecret('Repeat password: ');
  if (password !== again) throw new CliError('the passwords do not match');
  if (password === '') throw new CliError('the password is empty');
  return password;
}

/** A yes/no question; only `y` or `yes` (any case) is a yes, and an ended input is a no. */
export async function confirm(question: string): Promise<boolean> {
  let answer: string;
  if (process.stdin.isTTY) {
    process.stderr.write(question);
    const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
    answer = await new Promise<string>((resolvePromise) => rl.question('', resolvePromise));
    rl.close();
  } else {
    try {
      answer = await readPipedLine(question);
    } catch {
      answer = '';
    }
  }
  return /^(y|yes)$/i.test(answer.trim());
}
