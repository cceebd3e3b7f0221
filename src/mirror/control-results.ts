/**
 * Results of the mirroring control RPCs (KIP-1279 spec §4.3): a top-level error and, for the
 * topic RPCs, one result per topic; the top-level error is the first per-topic error (AS33).
 */

export interface TopicResult {
  name: string;
  errorCode: number;
  errorMessage: string | null;
}

export interface TopLevelResult {
  errorCode: number;
  errorMessage: string | null;
}

export interface TopicsResult extends TopLevelResult {
  topics: TopicResult[];
}

export const ok = (name: string): TopicResult => ({ name, errorCode: 0, errorMessage: null });
export const err = (name: string, errorCode: number, errorMessage: string): TopicResult => ({ name, errorCode, errorMessage });

export function topLevel(topics: TopicResult[]): TopicsResult {
  const first = topics.find((t) => t.errorCode !== 0);
  return { errorCode: first?.errorCode ?? 0, errorMessage: first?.errorMessage ?? null, topics };
}

export function allFail(names: readonly string[], code: number, msg: string): TopicsResult {
  return topLevel(names.map((n) => err(n, code, msg)));
}
