import type { z } from 'zod';
import { nestedGroup, settingInfo, type SettingGroup, type SettingInfo } from './setting.js';

export interface DeclaredSetting extends SettingInfo {
  /** Where it sits in the configuration: `['database', 'poolMax']`. */
  path: string[];
  schema: z.core.$ZodType;
}

/** Every setting of a group and of the groups nested in it, in declaration order. */
export function declaredSettings(group: SettingGroup, path: string[] = []): DeclaredSetting[] {
  return Object.entries(group.settings).flatMap(([key, schema]) => {
    const info = settingInfo.get(schema);
    if (info) return [{ ...info, path: [...path, key], schema }];
    return declaredSettings(nestedOf(schema, [...path, key]), [...path, key]);
  });
}

/**
 * The group's input read from the environment: each setting's variable under its configuration name,
 * nested like the groups. An empty variable means "not set", as shells and .env files commonly produce.
 */
export function readEnvironment(
  group: SettingGroup,
  environment: Record<string, string | undefined>,
  path: string[] = [],
): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const [key, schema] of Object.entries(group.settings)) {
    const info = settingInfo.get(schema);
    if (!info) input[key] = readEnvironment(nestedOf(schema, [...path, key]), environment, [...path, key]);
    else if (environment[info.env] !== undefined && environment[info.env] !== '') input[key] = environment[info.env];
  }
  return input;
}

function nestedOf(schema: z.core.$ZodType, path: string[]): SettingGroup {
  const nested = nestedGroup(schema);
  if (!nested) throw new Error(`${path.join('.')}: neither a setting nor a group`);
  return nested;
}
