// docs/performance.md "Benchmark suite": CPU time of a server process (and its children: cluster workers, the
// Argon2 and libuv threads are counted in their process) read from /proc, before and after a load round. On a
// machine shared with other work, the CPU a request costs the server moves far less than its req/s.
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

/** Clock ticks a second (`getconf CLK_TCK`, 100 on Linux). */
const TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** utime + stime and ppid of one process from /proc/<pid>/stat, or null when it is gone (or not Linux). */
function statOf(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: split after its closing one.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return null;
  }
}

/** CPU seconds used so far by `pid` and its descendants; NaN where /proc cannot be read. */
export function cpuSecondsOf(pid) {
  const root = statOf(pid);
  if (!root) return NaN;
  let ticks = root.ticks;
  const children = new Map();
  let entries = [];
  try {
    entries = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return ticks / TICKS;
  }
  for (const name of entries) {
    const s = statOf(name);
    if (!s) continue;
    if (!children.has(s.ppid)) children.set(s.ppid, []);
    children.get(s.ppid).push({ pid: Number(name), ticks: s.ticks });
  }
  const queue = [pid];
  while (queue.length) {
    for (const child of children.get(queue.shift()) ?? []) {
      ticks += child.ticks;
      queue.push(child.pid);
    }
  }
  return ticks / TICKS;
}

/**
 * Waits until `pid` (with its descendants) is idle: less than 10 ms of CPU over 100 ms, at most `maxMs`. A round
 * ends with requests still in flight in the server (a login's Argon2 hashes go on after the load stops); without
 * this their CPU and their cores would fall on the next round, of another target (docs/performance.md).
 */
export async function settle(pid, maxMs = 3000) {
  const started = Date.now();
  let before = cpuSecondsOf(pid);
  while (Number.isFinite(before) && Date.now() - started < maxMs) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const now = cpuSecondsOf(pid);
    if (!(now - before >= 0.01)) return;
    before = now;
  }
}

/**
 * Resident memory of one process in MiB from /proc/<pid>/status: now (VmRSS) and its peak (VmHWM); NaN where
 * /proc cannot be read. docs/performance.md "Sizing": the memory of one instance after the load rounds.
 */
export function memoryOf(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { rssMiB: kib('VmRSS') / 1024, peakMiB: kib('VmHWM') / 1024 };
  } catch {
    return { rssMiB: NaN, peakMiB: NaN };
  }
}
