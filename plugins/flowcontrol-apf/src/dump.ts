import type { RouteDefinition } from '@skiff/kernel';
import type { ApiExtensions } from '@skiff/apiserver';
import type { FlowController, LevelState } from './controller.js';
import { DUMP_PRIORITY_LEVELS_PATH } from './names.js';

const COLUMNS: [string, (state: LevelState) => string | number | boolean][] = [
  ['PriorityLevelName', (state) => state.name],
  ['ActiveQueues', (state) => state.activeQueues],
  ['IsIdle', (state) => state.waiting === 0 && state.executing === 0],
  ['IsExempt', (state) => state.exempt],
  ['ConcurrencyLimit', (state) => state.concurrencyLimit],
  ['SeatsInUse', (state) => state.seatsInUse],
  ['WaitingRequests', (state) => state.waiting],
  ['ExecutingRequests', (state) => state.executing],
  ['DispatchedRequests', (state) => state.dispatched],
  ['RejectedRequests', (state) => state.rejected],
  ['TimedoutRequests', (state) => state.timedOut],
  ['CancelledRequests', (state) => state.cancelled],
];

/** The priority levels as a table of comma-separated columns, one level a line, like kube-apiserver's dump. */
export function dumpPriorityLevels(states: readonly LevelState[]): string {
  const rows = [COLUMNS.map(([name]) => name), ...states.map((state) => COLUMNS.map(([, value]) => String(value(state))))];
  const widths = COLUMNS.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  return `${rows
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join(', ')
        .trimEnd(),
    )
    .join('\n')}\n`;
}

/** Serves the dump at Kubernetes' path, for whoever is authorized to GET it. */
export function serveDump(extensions: ApiExtensions, controller: FlowController): void {
  const route: RouteDefinition = {
    method: 'GET',
    path: DUMP_PRIORITY_LEVELS_PATH,
    handler: async () => ({ status: 200, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: dumpPriorityLevels(controller.states()) }),
  };
  extensions.route(route);
}
