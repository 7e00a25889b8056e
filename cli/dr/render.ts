/** Drill reports as `dr get` lists them and `dr describe` and `dr drill` print one. */
import { type DrillReport, drillSummary, humanDuration } from '../../shared/domain/drills/report.js';
import { table } from '../render/table.js';

export function renderDrill(report: DrillReport): string {
  return `${drillSummary(report).join('\n')}\n`;
}

export function renderDrillTable(reports: readonly DrillReport[]): string {
  const rows = [
    ['NAME', 'STATUS', 'BACKUP', 'CLUSTER', 'RPO', 'RTO', 'MISMATCHES', 'STARTED'],
    ...reports.map((r) => [
      r.name,
      r.phase,
      r.backup.name,
      r.cluster,
      humanDuration(r.rpoSeconds),
      r.rtoSeconds === undefined ? '<none>' : humanDuration(r.rtoSeconds),
      String(r.mismatches.length),
      r.startedAt,
    ]),
  ];
  return `${table(rows)}\n`;
}
