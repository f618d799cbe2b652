/**
 * Real-component policy for tests: under CI=true a missing component is a failure, never a skip.
 * Locally a test may skip with the returned reason.
 */
export function missingComponent(what: string, howToInstall: string): string | false {
  const reason = `${what} is not available (${howToInstall})`;
  if (process.env.CI === 'true') throw new Error(`CI=true requires ${reason}`);
  return reason;
}

/** True when running in CI (real components are mandatory there). */
export const IN_CI = process.env.CI === 'true';
