/** What every interop scenario runs against: Apache Kafka or a Fjord node, by bootstrap address. */
export type TargetKind = 'kafka' | 'fjord';

export interface Target {
  /** e.g. `kafka-4.1.2` or `fjord`; used in test names and reports. */
  readonly name: string;
  readonly kind: TargetKind;
  /** `127.0.0.1:PORT` */
  readonly bootstrap: string;
  readonly host: string;
  readonly port: number;
  /** The node's data directory (log.dirs). */
  readonly dataDir: string;
  stop(): Promise<void>;
}
