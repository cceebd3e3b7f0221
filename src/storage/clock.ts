/** Milliseconds since the epoch; injected so tests drive time by hand. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
