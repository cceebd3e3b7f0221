/** Polling with a deadline, for tests that wait on a real process instead of sleeping. */

/**
 * Polls `cond` until it holds, failing after `timeoutMs` with what was awaited. A throw counts as
 * "not yet", and the last one is named in the failure.
 */
export async function waitFor(what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 60_000, intervalMs = 100): Promise<void> {
  const until = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      if (await cond()) return;
    } catch (e) {
      last = e;
    }
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * Calls `attempt` until `done` accepts its answer, for at most `timeoutMs`, and returns the last
 * answer either way: for differential scenarios, where the caller asserts on what came back (a
 * broker still electing a new partition's leader or loading a coordinator answers "not yet").
 */
export async function lastAnswer<T>(attempt: () => Promise<T>, done: (t: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const t = await attempt();
    if (done(t) || Date.now() > deadline) return t;
    await new Promise((r) => setTimeout(r, 200));
  }
}
