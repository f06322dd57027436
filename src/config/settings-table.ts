import { z } from 'zod';
import { declaredSettings, type DeclaredSetting } from './declared.js';
import { configuration } from './schema.js';

/**
 * docs/settings.md, generated from the settings' declarations (`npm run settings:doc`), so the table
 * cannot drift from what loadConfig reads.
 */
export function renderSettingsTable(): string {
  const groups = new Map<string, DeclaredSetting[]>();
  for (const setting of declaredSettings(configuration)) {
    const group = setting.path.slice(0, -1).join('.') || 'service';
    groups.set(group, [...(groups.get(group) ?? []), setting]);
  }
  const sections = [...groups].map(([group, settings]) =>
    [
      `## ${group}`,
      '',
      '| variable | default | accepts | meaning |',
      '|---|---|---|---|',
      ...settings.map(
        (setting) =>
          `| \`${setting.env}\` | ${defaultOf(setting)} | ${accepted(setting)} | ${setting.description.replaceAll('|', '\\|')} |`,
      ),
    ].join('\n'),
  );
  return [
    '# Settings',
    '',
    '<!-- Generated from src/config/groups/ by `npm run settings:doc`; CI checks it with `npm run settings:check`. -->',
    '',
    'Every setting is an environment variable, read and validated once at start (`src/config/`); an invalid',
    'value, or a combination the rules refuse, stops the start naming the variables. An empty variable counts',
    'as unset. Tests also honour `TEST_DATABASE_URL` (a server where they may create databases) instead of',
    'starting an embedded PostgreSQL.',
    '',
    ...sections.flatMap((section) => [section, '']),
  ].join('\n');
}

function defaultOf(setting: DeclaredSetting): string {
  if (setting.defaultText) return setting.defaultText;
  const unset = z.safeParse(setting.schema, undefined);
  const value: unknown = unset.success ? unset.data : undefined;
  if (value === undefined) return '(unset)';
  if (Array.isArray(value)) return value.length === 0 ? '(none)' : `\`${value.join(',')}\``;
  return `\`${String(value)}\``;
}

/** The values the variable takes, read from its schema's input side. */
function accepted(setting: DeclaredSetting): string {
  const json = z.toJSONSchema(setting.schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  if (Array.isArray(json['enum'])) return json['enum'].map((value) => `\`${String(value)}\``).join(', ');
  if (json['type'] === 'integer' || json['type'] === 'number') {
    const kind = json['type'] === 'integer' ? 'integer' : 'number';
    return `${kind} ${String(json['minimum'])} … ${String(json['maximum'])}`;
  }
  if (json['format'] === 'uri') return 'URL';
  return 'text';
}
