/**
 * The example alert rules in ops/ are valid Prometheus rules and fire as documented: checked and
 * unit-tested by Prometheus's own promtool (Debian's `prometheus` package).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/node.js';

const OPS = join(ROOT, 'ops');

describe('ops/prometheus-alerts.yml', () => {
  it('passes promtool check rules and its unit tests', () => {
    const check = spawnSync('/usr/bin/promtool', ['check', 'rules', 'prometheus-alerts.yml'], { cwd: OPS, encoding: 'utf8' });
    expect(check.status, check.stdout + check.stderr).toBe(0);
    expect(check.stdout).toContain('SUCCESS: 10 rules found');
    const test = spawnSync('/usr/bin/promtool', ['test', 'rules', 'prometheus-alerts.test.yml'], { cwd: OPS, encoding: 'utf8' });
    expect(test.status, test.stdout + test.stderr).toBe(0);
  });
});
