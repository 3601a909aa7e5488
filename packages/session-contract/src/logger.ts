/** The logging surface the server needs; pino's logger satisfies it. */
export interface Logger {
  debug(fields: object, message: string): void;
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

const ignore = () => undefined;
export const silentLogger: Logger = { debug: ignore, info: ignore, warn: ignore, error: ignore };
