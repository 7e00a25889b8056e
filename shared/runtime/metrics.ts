/**
 * A run's figures as CloudWatch metrics, in the Embedded Metric Format (Powertools Metrics: one
 * structured log line, no API call): items, bytes, duration, errors and warnings per ended run,
 * under the `Lifeboat` namespace with the workflow and phase as dimensions. Names and counts
 * only, never what a cluster holds.
 */
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';

const metrics = new Metrics({ namespace: 'Lifeboat', serviceName: 'lifeboat' });

export interface RunMetrics {
  readonly workflow: string;
  readonly phase: string;
  readonly items: number;
  readonly errors: number;
  readonly warnings: number;
  readonly bytes?: number;
  readonly seconds?: number;
}

export function publishRunMetrics(figures: RunMetrics): void {
  metrics.addDimensions({ workflow: figures.workflow, phase: figures.phase });
  metrics.addMetric('Runs', MetricUnit.Count, 1);
  metrics.addMetric('Items', MetricUnit.Count, figures.items);
  metrics.addMetric('Errors', MetricUnit.Count, figures.errors);
  metrics.addMetric('Warnings', MetricUnit.Count, figures.warnings);
  if (figures.bytes !== undefined) metrics.addMetric('Bytes', MetricUnit.Bytes, figures.bytes);
  if (figures.seconds !== undefined) metrics.addMetric('Duration', MetricUnit.Seconds, figures.seconds);
  metrics.publishStoredMetrics();
}
