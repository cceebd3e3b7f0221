/**
 * Kafka's authentication counters per listener (the Selector's socket-server-metrics:
 * successful-authentication-total, failed-authentication-total,
 * successful-reauthentication-total, failed-reauthentication-total), under the JMX exporter's
 * names for `kafka.server:type=socket-server-metrics,listener=L`:
 * `kafka_server_socket_server_metrics_failed_authentication_total{listener="L"}`.
 * Kafka's `-rate` attributes are what Prometheus computes with `rate()` over these totals.
 * Fed by the `fjord:authentication` channel.
 */
import { Counter, type Registry } from 'prom-client';
import { CHANNEL, subscribe, type AuthenticationMessage } from './channels.js';

type ListenerCounter = Counter<'listener'>;

export class AuthenticationMetrics {
  private readonly unsubscribe: () => void;

  constructor(register: Registry) {
    const counter = (name: string, help: string): ListenerCounter =>
      new Counter({ name: `kafka_server_socket_server_metrics_${name}_total`, help, labelNames: ['listener'], registers: [register] });
    const success = counter('successful_authentication', 'SASL authentications that succeeded, per listener (Kafka successful-authentication-total).');
    const failure = counter('failed_authentication', 'SASL authentications that failed, per listener (Kafka failed-authentication-total).');
    const reauthSuccess = counter('successful_reauthentication', 'KIP-368 re-authentications that succeeded, per listener (Kafka successful-reauthentication-total).');
    const reauthFailure = counter('failed_reauthentication', 'KIP-368 re-authentications that failed, per listener (Kafka failed-reauthentication-total).');
    this.unsubscribe = subscribe<AuthenticationMessage>(CHANNEL.authentication, (m) => {
      const c = m.reauthentication ? (m.success ? reauthSuccess : reauthFailure) : m.success ? success : failure;
      c.inc({ listener: m.listener });
    });
  }

  close(): void {
    this.unsubscribe();
  }
}
