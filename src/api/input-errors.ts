import { GraphQLError, Kind, visit, type ASTNode, type DocumentNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { badUserInput } from '../graphql/errors.js';
import { ScalarInputError } from './scalars.js';

/**
 * Input errors carry `extensions.code: BAD_USER_INPUT`:
 * - a bad scalar literal also names its argument (`extensions.argument`, e.g. "input.userId"),
 *   which graphql-js leaves out;
 * - variables that fail coercion (wrong type, unknown enum value, missing field) get the code,
 *   which graphql-js leaves out. Execution never started for them, so nothing was written.
 */
export function useInputErrorCodes(): Plugin {
  return {
    onExecute: () => ({
      onExecuteDone: ({ result, setResult }) => {
        if (!('errors' in result) || !result.errors || result.data !== undefined) return;
        setResult({
          ...result,
          errors: result.errors.map((error) =>
            error.extensions?.code
              ? error
              : new GraphQLError(error.message, { nodes: error.nodes, extensions: { ...error.extensions, code: 'BAD_USER_INPUT' } }),
          ),
        });
      },
    }),
    onValidate: ({ params }) =>
      ({ result, setResult }) => {
        const scalarErrors = result.filter(isScalarInputError);
        if (scalarErrors.length === 0) return;
        const names = argumentNames(params.documentAST, new Set(scalarErrors.flatMap((error) => error.nodes ?? [])));
        setResult(
          result.map((error) => {
            if (!isScalarInputError(error)) return error;
            const argument = error.nodes?.map((node: ASTNode) => names.get(node)).find(Boolean);
            if (!argument) return error;
            return badUserInput(`Invalid value for argument "${argument}": ${error.message}`, argument, error.nodes);
          }),
        );
      },
  };
}

function isScalarInputError(error: GraphQLError): boolean {
  return error instanceof ScalarInputError || error.originalError instanceof ScalarInputError;
}

function argumentNames(document: DocumentNode, wanted: Set<ASTNode>): Map<ASTNode, string> {
  const names = new Map<ASTNode, string>();
  visit(document, {
    enter(node, _key, parent, _path, ancestors) {
      if (!wanted.has(node)) return;
      const path = [...ancestors, parent]
        .filter((ancestor): ancestor is ASTNode => !!ancestor && !Array.isArray(ancestor) && 'kind' in ancestor)
        .filter((ancestor) => ancestor.kind === Kind.ARGUMENT || ancestor.kind === Kind.OBJECT_FIELD)
        .map((ancestor) => (ancestor.kind === Kind.ARGUMENT || ancestor.kind === Kind.OBJECT_FIELD ? ancestor.name.value : ''));
      if (path.length > 0) names.set(node, path.join('.'));
    },
  });
  return names;
}
