/**
 * CPU seconds per test file, for finding what makes CI slow (the suite is CPU-bound: four files at a
 * time on two cores). With `REFRACT_TEST_CPU_LOG=<file>` set, each file appends one JSON line there
 * when it ends: `{file, cpu, self, children, wall}` in seconds, where `self` is the vitest fork's own
 * user + system time (imports included) and `children` that of the processes it spawned and waited for
 * (daemons, simulators, compilers: /proc/self/stat cutime + cstime). Unset, it does nothing.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { afterAll } from 'vitest';

const out = process.env.REFRACT_TEST_CPU_LOG;

/** [own, children] CPU seconds of this process from /proc/self/stat (clock ticks of 1/100 s). */
function cpuNow(): [number, number] {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number);
  // fields after the command: state(0) … utime(11) stime(12) cutime(13) cstime(14)
  return [(f[11]! + f[12]!) / 100, (f[13]! + f[14]!) / 100];
}

if (out) {
  const wall0 = performance.now();
  afterAll((suite) => {
    const [self, children] = cpuNow();
    const file = (suite as { filepath?: string; name?: string }).filepath ?? (suite as { name?: string }).name ?? '?';
    const line = { file: file.replace(/.*\/test\//, ''), cpu: +(self + children).toFixed(2), self, children, wall: +((performance.now() - wall0) / 1000).toFixed(1) };
    appendFileSync(out, `${JSON.stringify(line)}\n`);
  });
}
