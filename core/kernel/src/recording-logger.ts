import type { Logger } from './types/logger.js';

export interface LogRecord {
  level: 'debug' | 'info' | 'warn' | 'error';
  fields: Record<string, unknown>;
  message?: string;
}

/** A Logger that keeps what it is told, so tests can assert that failures were logged. */
export function recordingLogger(records: LogRecord[] = [], bindings: Record<string, unknown> = {}): Logger & { records: LogRecord[] } {
  const log = (level: LogRecord['level']) => (obj: object | string, msg?: string) => {
    if (typeof obj === 'string') records.push({ level, fields: { ...bindings }, message: obj });
    else records.push({ level, fields: { ...{}, ...bindings, ...obj }, message: msg });
  };
  return {
    records,
    debug: log('debug'),
    info: log('info'),
    warn: log('warn'),
    error: log('error'),
    child: (more) => recordingLogger(records, { ...{}, ...bindings, ...more }),
  };
}
