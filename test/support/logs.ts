import type { Logger } from '@eve-flue/compat-server';

export interface LogEntry {
  level: 'debug' | 'info' | 'warn' | 'error';
  message: string;
  fields: object;
}

/** A logger that keeps every entry, serialized as a log sink would write it. */
export function recordingLogger(): Logger & { entries: LogEntry[]; text(): string } {
  const entries: LogEntry[] = [];
  const record = (level: LogEntry['level']) => (fields: object, message: string) => entries.push({ level, message, fields });
  return {
    entries,
    debug: record('debug'),
    info: record('info'),
    warn: record('warn'),
    error: record('error'),
    text: () => entries.map((e) => JSON.stringify({ level: e.level, msg: e.message, ...e.fields }, errorReplacer)).join('\n'),
  };
}

function errorReplacer(_key: string, value: unknown): unknown {
  return value instanceof Error ? { name: value.name, message: value.message, stack: value.stack } : value;
}
