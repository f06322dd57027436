import {
  Kind,
  visit,
  type ArgumentNode,
  type ASTNode,
  type DocumentNode,
  type OperationDefinitionNode,
  type ValueNode,
  type VariableDefinitionNode,
} from 'graphql';

// Without the u flag, any surrogate code unit (paired or not): most text has none, so one quick pass.
const SUSPECT = /[\0\uD800-\uDFFF]/;
// With the u flag a lone surrogate is one code point of category Cs (a valid pair is not); index in code units.
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Text that cannot be stored as sent is refused before anything runs, for every input at once
 * (arguments and input fields, literals and variables, any scalar: String, ID, UInt64, cursors,
 * URLs), so no resolver and no store has to remember it:
 * - U+0000 (NUL): PostgreSQL's text types refuse it, so it would fail mid-write as a server error;
 * - a lone surrogate (half of a UTF-16 pair, e.g. JSON's "\ud800"): it has no UTF-8 form, and the
 *   driver would write U+FFFD instead, changing the input silently.
 * The raw values are checked (as sent, before any scalar parses them), so a custom scalar cannot
 * hide one by turning the text into something else first.
 */
export function textProblem(value: string): string | null {
  if (!SUSPECT.test(value)) return null;
  const nul = value.indexOf('\0');
  if (nul >= 0) return `text must not contain U+0000 (NUL), found at index ${nul}`;
  const lone = LONE_SURROGATE.exec(value);
  if (!lone) return null;
  const unit = lone[0].charCodeAt(0).toString(16).toUpperCase();
  return `text must be well-formed Unicode: lone surrogate U+${unit} at index ${lone.index}`;
}

export interface BadText {
  /** Where, as the other input errors name it: `inputs[2].context.surface`. */
  argument: string;
  message: string;
  /** The literal or variable it came through (the error's location). */
  node: ASTNode;
}

/** The first bad text in a raw JSON value (a variable as sent), with its path inside the value. */
export function badTextInValue(value: unknown, path = ''): { path: string; message: string } | null {
  // A loop, not recursion: JSON.parse takes any depth, and a variable nested deeper than the call
  // stack must be refused as input (by coercion), not crash the walk.
  const stack: Step[] = [{ value, key: null, parent: null }];
  for (let step = stack.pop(); step; step = stack.pop()) {
    const current = step.value;
    if (typeof current === 'string') {
      const message = textProblem(current);
      if (message !== null) return { path: path + pathOf(step), message };
    } else if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) stack.push({ value: current[i], key: i, parent: step });
    } else if (typeof current === 'object' && current !== null) {
      const entries = Object.entries(current);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, inner] = entries[i]!;
        stack.push({ value: inner, key, parent: step });
      }
    }
  }
  return null;
}

/** One value inside a variable, and how it was reached (to name its path only when it is bad). */
interface Step {
  value: unknown;
  key: string | number | null;
  parent: Step | null;
}

function pathOf(step: Step): string {
  let path = '';
  for (let at: Step | null = step; at?.key != null; at = at.parent) {
    path = (typeof at.key === 'number' ? `[${at.key}]` : `.${at.key}`) + path;
  }
  return path;
}

/** Every argument value of an operation (and of the fragments of its document) with its path. */
interface ArgumentValues {
  values: { value: ValueNode; path: string }[];
  definitions: Map<string, VariableDefinitionNode>;
}

// Documents come from Yoga's parse cache: an operation is walked once, not per request.
const walked = new WeakMap<OperationDefinitionNode, ArgumentValues>();

/** The first bad text in the arguments of `operation` as it will run with `variables`, or null. */
export function badTextIn(
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Readonly<Record<string, unknown>> | null | undefined,
): BadText | null {
  let argumentValues = walked.get(operation);
  if (!argumentValues) walked.set(operation, (argumentValues = collect(document, operation)));
  const { values, definitions } = argumentValues;
  const inValue = (node: ValueNode, path: string): BadText | null => {
    switch (node.kind) {
      case Kind.STRING: {
        const message = textProblem(node.value);
        return message === null ? null : { argument: path, message, node };
      }
      case Kind.LIST:
        for (let i = 0; i < node.values.length; i++) {
          const found = inValue(node.values[i]!, `${path}[${i}]`);
          if (found) return found;
        }
        return null;
      case Kind.OBJECT:
        for (const field of node.fields) {
          const found = inValue(field.value, `${path}.${field.name.value}`);
          if (found) return found;
        }
        return null;
      case Kind.VARIABLE: {
        // As coercion does: the value sent, else the definition's default. A variable the
        // operation does not define is a validation error already.
        const definition = definitions.get(node.name.value);
        const sent = variables?.[node.name.value];
        if (sent !== undefined) {
          const found = badTextInValue(sent, path);
          return found && { argument: found.path, message: found.message, node };
        }
        return definition?.defaultValue ? inValue(definition.defaultValue, path) : null;
      }
      default:
        return null;
    }
  };
  for (const { value, path } of values) {
    const found = inValue(value, path);
    if (found) return { ...found, message: `Invalid value for argument "${found.argument}": ${found.message}` };
  }
  return null;
}

function collect(document: DocumentNode, operation: OperationDefinitionNode): ArgumentValues {
  const values: ArgumentValues['values'] = [];
  const visitor = { Argument: (node: ArgumentNode) => void values.push({ value: node.value, path: node.name.value }) };
  visit(operation, visitor);
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) visit(definition, visitor);
  }
  const defined = operation.variableDefinitions ?? [];
  const definitions = new Map(defined.map((definition) => [definition.variable.name.value, definition]));
  return { values, definitions };
}
