/** The one error model: KafkaError carries a code; errorCodeOf is the one mapping to responses. */
import { describe, expect, it } from 'vitest';
import { DecodeError } from '../../src/protocol/decode-error.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { KafkaError, errorCodeOf } from '../../src/protocol/kafka-error.js';

describe('KafkaError and errorCodeOf', () => {
  it('takes the name, message and retriability of the code from the error table', () => {
    const e = new KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER);
    expect(e.codeName).toBe('NOT_LEADER_OR_FOLLOWER');
    expect(e.retriable).toBe(true);
    expect(new KafkaError(ErrorCode.INVALID_CONFIG, 'why').message).toBe('why');
    expect(new KafkaError(ErrorCode.INVALID_CONFIG).retriable).toBe(false);
  });

  it('maps a KafkaError to its code and anything else to UNKNOWN_SERVER_ERROR', () => {
    expect(errorCodeOf(new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))).toBe(3);
    expect(errorCodeOf(new Error('boom'))).toBe(-1);
    expect(errorCodeOf('not an error')).toBe(-1);
  });

  it('makes DecodeError a KafkaError with INVALID_REQUEST that names the byte offset', () => {
    const e = new DecodeError('truncated', 17);
    expect(e).toBeInstanceOf(KafkaError);
    expect(errorCodeOf(e)).toBe(ErrorCode.INVALID_REQUEST);
    expect(e.message).toBe('truncated (at byte 17)');
    expect(e.offset).toBe(17);
    expect(e.name).toBe('DecodeError');
  });
});
