/**
 * DescribeLogDirs (key 35), v1-5.
 *
 * Behavior: one result per directory of log.dirs, each with the size of each requested
 * partition it holds (null topics = all), offset lag 0 (no future replicas), from v4 the
 * file system's total and usable bytes, and from v5 IsCordoned, always false: directories
 * cannot be cordoned here (Kafka's `cordoned.log.dirs`, KIP-1066, is not offered).
 */
import { statfs } from 'node:fs/promises';
import { ErrorCode } from '../../protocol/generated/errors.js';
import { decodeDescribeLogDirsRequest, type DescribeLogDirsRequest } from '../../protocol/generated/messages/describe-log-dirs-request.js';
import { encodeDescribeLogDirsResponse, type DescribeLogDirsResponseInput } from '../../protocol/generated/messages/describe-log-dirs-response.js';
import type { ApiHandler } from '../../server/api-handler.js';
import type { BrokerContext } from '../broker-context.js';

type Result = NonNullable<DescribeLogDirsResponseInput['results']>[number];
type TopicOut = NonNullable<Result['topics']>[number];

export function describeLogDirsHandler(ctx: BrokerContext): ApiHandler<DescribeLogDirsRequest, DescribeLogDirsResponseInput> {
  return {
    apiKey: 35,
    minVersion: 1,
    maxVersion: 5,
    decode: decodeDescribeLogDirsRequest,
    encode: encodeDescribeLogDirsResponse,
    async handle(rc, req) {
      const wanted = req.topics === null ? null : new Map(req.topics.map((t) => [t.topic, new Set(t.partitions)]));
      const logs = ctx.replicas.logManager;
      const results: Result[] = [];
      for (const dir of logs.logDirs) {
        const topics: TopicOut[] = [];
        for (const t of ctx.image.topicsByName.values()) {
          const parts = wanted === null ? null : wanted.get(t.name);
          if (wanted !== null && !parts) continue;
          const out: NonNullable<TopicOut['partitions']>[number][] = [];
          for (const p of t.partitions) {
            if (parts && !parts.has(p.partition)) continue;
            const log = ctx.replicas.getLog(t.name, p.partition);
            if (!log || logs.dirOf(t.name, p.partition) !== dir) continue;
            out.push({ partitionIndex: p.partition, partitionSize: BigInt(log.size), offsetLag: 0n, isFutureKey: false });
          }
          if (out.length > 0) topics.push({ name: t.name, partitions: out });
        }
        let totalBytes = -1n;
        let usableBytes = -1n;
        if (rc.apiVersion >= 4) {
          try {
            const s = await statfs(dir);
            totalBytes = BigInt(s.blocks) * BigInt(s.bsize);
            usableBytes = BigInt(s.bavail) * BigInt(s.bsize);
          } catch {
            // unknown sizes stay -1, as Kafka reports them when the file store cannot be read
          }
        }
        results.push({ errorCode: ErrorCode.NONE, logDir: dir, topics, totalBytes, usableBytes });
      }
      return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, results };
    },
  };
}
