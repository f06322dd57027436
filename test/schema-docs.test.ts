import { readFile } from 'node:fs/promises';
import {
  getNamedType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isIntrospectionType,
  isObjectType,
  isScalarType,
  isSpecifiedScalarType,
  type GraphQLSchema,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { schema } from '../src/api/schema.js';
import { GRAPHIQL_OPERATIONS_FILE } from '../src/server/graphiql.js';

/** Every place of the schema a description belongs to, as "Type", "Type.field", "Type.field(arg)" or "Enum.VALUE". */
function undocumented(target: GraphQLSchema): string[] {
  const missing: string[] = [];
  const need = (where: string, description: string | null | undefined) => void (description?.trim() || missing.push(where));
  for (const type of Object.values(target.getTypeMap())) {
    if (isIntrospectionType(type) || isSpecifiedScalarType(type)) continue;
    need(type.name, type.description);
    if (isObjectType(type) || isInterfaceType(type)) {
      for (const field of Object.values(type.getFields())) {
        need(`${type.name}.${field.name}`, field.description);
        for (const arg of field.args) need(`${type.name}.${field.name}(${arg.name})`, arg.description);
      }
    }
    if (isInputObjectType(type)) for (const field of Object.values(type.getFields())) need(`${type.name}.${field.name}`, field.description);
    if (isEnumType(type)) for (const value of type.getValues()) need(`${type.name}.${value.name}`, value.description);
  }
  return missing;
}

describe('the schema, for typed clients', () => {
  it('describes every type, field, argument and enum value', () => {
    expect(undocumented(schema)).toEqual([]);
  });

  it('the check finds what is missing', async () => {
    const { buildSchema } = await import('graphql');
    const bare = buildSchema('"The root" type Query { "A field" a(x: Int): E } enum E { "yes" ONE TWO }');
    expect(undocumented(bare)).toEqual(['Query.a(x)', 'E', 'E.TWO']);
  });

  it('links every custom scalar to its specification (@specifiedBy)', () => {
    const custom = Object.values(schema.getTypeMap()).filter((type) => isScalarType(type) && !isSpecifiedScalarType(type));
    expect(custom.map((type) => type.name).sort()).toEqual(['DateTime', 'Decimal', 'UInt64']);
    for (const type of custom) expect(isScalarType(type) && type.specifiedByURL).toMatch(/^https:\/\//);
  });

  it('counts are 64-bit safe: every count field has an exact UInt64 twin, and sums an exact Decimal', () => {
    const types = schema.getTypeMap();
    const field = (type: string, name: string) =>
      (types[type] as { getFields(): Record<string, { type: unknown; deprecationReason?: string | null }> }).getFields()[name]!;
    expect(String(getNamedType(field('ItemAggregate', 'signalTotal').type as never))).toBe('UInt64');
    expect(String(getNamedType(field('ItemAggregate', 'weightTotal').type as never))).toBe('Decimal');
    expect(String(getNamedType(field('LeaveEpisode', 'gatedSignalTotal').type as never))).toBe('UInt64');
    for (const [type, name] of [
      ['ItemAggregate', 'signalCount'],
      ['ItemAggregate', 'weightSum'],
      ['LeaveEpisode', 'gatedSignals'],
    ] as const) {
      expect(field(type, name).deprecationReason).toBeTruthy();
    }
  });

  it("GraphiQL opens with the README's example operations", async () => {
    const [readme, operations] = await Promise.all([
      readFile(new URL('../README.md', import.meta.url), 'utf8'),
      readFile(new URL(`../${GRAPHIQL_OPERATIONS_FILE}`, import.meta.url), 'utf8'),
    ]);
    expect(readme).toContain(`\`\`\`graphql\n${operations}\`\`\``);
  });
});
