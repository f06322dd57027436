import { z } from 'zod';
import { DatabaseUrlError, parseDatabaseUrl } from './database-url.js';

/** What the docs and the loader know of one setting, beside its schema. */
export interface SettingInfo {
  /** The environment variable it is read from. */
  env: string;
  description: string;
  /** The default as the docs state it, when it is not a plain value (derived, or "unset" meaning something). */
  defaultText?: string;
}

export const settingInfo = z.registry<SettingInfo>();

/**
 * Declares one setting: the schema of its variable (with its default) and what it is for. Its key in
 * the group's object is its name in the configuration, everywhere it is passed.
 */
export function setting<Schema extends z.ZodType>(env: string, schema: Schema, description: string, defaultText?: string): Schema {
  // One schema instance per setting: a shared one (`milliseconds` without `.default`) would carry two names.
  if (settingInfo.has(schema)) throw new Error(`${env}: give the setting a schema of its own`);
  settingInfo.add(schema, { env, description, ...(defaultText ? { defaultText } : {}) });
  return schema;
}

/** The environment variable of a declared setting. */
export function variableOf(schema: z.core.$ZodType): string {
  const info = settingInfo.get(schema);
  if (!info) throw new Error('not a declared setting');
  return info.env;
}

/** Settings of one group, under their configuration names; a nested group's schema may stand among them. */
export interface SettingGroup<Shape extends z.ZodRawShape = z.ZodRawShape, Schema extends z.ZodType = z.ZodType> {
  settings: Shape;
  /** The group's schema: its settings, its cross-field rules (superRefine), what it derives (transform). */
  schema: Schema;
}

const groupsBySchema = new WeakMap<z.core.$ZodType, SettingGroup>();

export function group<const Shape extends z.ZodRawShape, Schema extends z.ZodType = z.ZodObject<Shape>>(
  settings: Shape,
  refine?: (object: z.ZodObject<Shape>) => Schema,
): SettingGroup<Shape, Schema> {
  const object = z.object(settings);
  const schema = (refine ? refine(object) : object) as Schema;
  const declared = { settings, schema };
  groupsBySchema.set(schema, declared);
  return declared;
}

/** The group a schema nested in another group's settings belongs to. */
export function nestedGroup(schema: z.core.$ZodType): SettingGroup | undefined {
  return groupsBySchema.get(schema);
}

/** A cross-field rule's complaint naming several variables at once ("A, B: set exactly one of them"). */
export function brokenRule(ctx: z.RefinementCtx, variables: readonly string[], message: string): void {
  ctx.addIssue({ code: 'custom', message, params: { variables } });
}

// The value kinds the settings share.

/**
 * A setting with no default: `undefined` when unset. Its key is always present in the configuration
 * (not `?:`), so whoever receives it states what unset means.
 */
export const optional = <Schema extends z.ZodType>(schema: Schema) => schema.optional().transform((value) => value);

export const count = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

export const milliseconds = count(1, 3_600_000);

export const flag = z.enum(['true', 'false', '1', '0']).transform((value) => value === 'true' || value === '1');

export const httpUrl = z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' });

/** libpq's URL form, with one host or several (`h1:5432,h2:5433`) and `target_session_attrs`. */
export const postgresUrl = z.string().superRefine((url, ctx) => {
  try {
    parseDatabaseUrl(url);
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: error instanceof DatabaseUrlError ? error.message : 'invalid PostgreSQL URL' });
  }
});
