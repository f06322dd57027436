import type { z } from 'zod';
import { declaredSettings, readEnvironment } from './declared.js';
import { configuration, configurationWithoutDatabase, configurationWithoutTokens, type Config } from './schema.js';

/** The one place that reads the environment. Everything else receives a `Config`. */

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const variableByPath = new Map(declaredSettings(configuration).map((setting) => [setting.path.join('.'), setting.env]));

/**
 * Reads and checks every setting; a ConfigError lists each problem under the variables it names.
 * `database: false` (a tool that never connects) drops production's demand for DATABASE_URL;
 * `tokens: false` (a tool that neither verifies nor mints tokens) its demand for a token key.
 */
export function loadConfig(environment: Record<string, string | undefined>, { database = true, tokens = true } = {}): Config {
  const whole = !database ? configurationWithoutDatabase : tokens ? configuration : configurationWithoutTokens;
  const parsed = whole.schema.safeParse(readEnvironment(configuration, environment));
  if (!parsed.success) throw new ConfigError(`Invalid configuration:\n  ${parsed.error.issues.map(problem).join('\n  ')}`);
  return parsed.data;
}

/** `VARIABLE: message`; a rule across settings names its variables itself, a value's problem by its path. */
function problem(issue: z.core.$ZodIssue): string {
  const variables: unknown = issue.code === 'custom' ? issue.params?.['variables'] : undefined;
  if (Array.isArray(variables)) return `${variables.join(', ')}: ${issue.message}`;
  const path = issue.path.map(String);
  // The longest prefix that is a setting; the rest is inside its value (CORS_ORIGINS.1).
  for (let length = path.length; length > 0; length--) {
    const variable = variableByPath.get(path.slice(0, length).join('.'));
    if (variable) return `${[variable, ...path.slice(length)].join('.')}: ${issue.message}`;
  }
  return `${path.join('.')}: ${issue.message}`;
}
