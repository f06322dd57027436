import path from 'node:path';
import ts from 'typescript';

/**
 * Strict validation of Kubernetes objects: each object is type-checked, as an object literal, against
 * its kind's interface from `kubernetes-models` (the types generated from the Kubernetes OpenAPI
 * schemas). TypeScript's excess-property check rejects every field the schema does not declare, at
 * any depth (a `readinesProbe` typo), which `kubernetes-models`' own validators let through (their
 * schemas allow additional properties); wrong types and missing required fields fail too.
 */
const INTERFACES: Record<string, [module: string, name: string]> = {
  'v1/ConfigMap': ['kubernetes-models/v1', 'IConfigMap'],
  'v1/Secret': ['kubernetes-models/v1', 'ISecret'],
  'v1/Service': ['kubernetes-models/v1', 'IService'],
  'v1/Pod': ['kubernetes-models/v1', 'IPod'],
  'apps/v1/Deployment': ['kubernetes-models/apps/v1', 'IDeployment'],
  'batch/v1/Job': ['kubernetes-models/batch/v1', 'IJob'],
  'policy/v1/PodDisruptionBudget': ['kubernetes-models/policy/v1', 'IPodDisruptionBudget'],
};

const ROOT = path.resolve(import.meta.dirname, '../..');
// Beside the sources, so that `kubernetes-models` resolves as it does for them; never written to disk.
const FILE = path.join(ROOT, 'test', '__kubernetes-objects__.ts');
const OPTIONS: ts.CompilerOptions = {
  strict: true,
  noEmit: true,
  skipLibCheck: true,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  types: [],
};

/** Every violation, as `Kind name: message`; empty when all the objects are valid. */
export function strictViolations(objects: ReadonlyArray<{ apiVersion?: string; kind?: string; metadata?: { name?: string } }>): string[] {
  const lines: string[] = [];
  const owners: string[] = [];
  const imports = new Set<string>();
  objects.forEach((object, index) => {
    const key = `${object.apiVersion}/${object.kind}`;
    const known = INTERFACES[key];
    const label = `${object.kind} ${object.metadata?.name ?? index}`;
    if (!known) throw new Error(`${label}: no strict schema for ${key}`);
    imports.add(`import type { ${known[1]} } from '${known[0]}';`);
    // One line per object, so a diagnostic's line names the object it is in.
    lines.push(`export const object${index}: ${known[1]} = ${JSON.stringify(object)};`);
    owners.push(label);
  });
  const header = [...imports];
  const source = [...header, ...lines].join('\n');

  const host = ts.createCompilerHost(OPTIONS);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, language, ...rest) =>
    path.resolve(name) === FILE ? ts.createSourceFile(name, source, language) : getSourceFile(name, language, ...rest);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => path.resolve(name) === FILE || fileExists(name);
  const program = ts.createProgram([FILE], OPTIONS, host);
  const file = program.getSourceFile(FILE)!;
  return ts.getPreEmitDiagnostics(program, file).map((diagnostic) => {
    const line = diagnostic.start === undefined ? 0 : file.getLineAndCharacterOfPosition(diagnostic.start).line;
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ');
    return `${owners[line - header.length] ?? 'manifest'}: ${message}`;
  });
}
