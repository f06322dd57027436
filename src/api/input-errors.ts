import { getOperationAST, GraphQLError, type ASTNode, type DocumentNode, type ExecutionArgs } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { argumentPaths, fieldNamedIn, isArgumentValue, variableArguments } from './argument-paths.js';
import { coerceItemByItem, type PerItemCoercion } from './per-item-coercion.js';
import { ScalarInputError } from './scalars.js';
import { badTextIn } from './text-inputs.js';

/**
 * Every input problem has one shape: `extensions.code: BAD_USER_INPUT` and `extensions.argument`,
 * the path within the arguments (`inputs[2].occurredAt`), whichever step found it:
 * - variables that fail coercion (wrong type, bad scalar, unknown enum value, missing field), which
 *   graphql-js reports as message text about the variable (`at "i[2].occurredAt"`); execution never
 *   started for them, so nothing was written. A request error: 200 for application/json, 400 for
 *   application/graphql-response+json, like parse and validation errors (`http.spec`);
 * - literals that fail validation (a bad scalar, enum value or input field), which graphql-js
 *   reports without a code;
 * - text that cannot be stored as sent (NUL, lone surrogates) in any argument (text-inputs.ts),
 *   refused here before anything executes, for queries, mutations and subscriptions alike;
 * - the server's own checks (signal-validation.ts), which build the shape themselves.
 * A batch asking for invalid items one by one (`invalid: SKIP`, `validateSignals`) has its list
 * variable coerced item by item first (per-item-coercion.ts): those items never fail the call.
 */
export function useInputErrorCodes(): Plugin<PerItemCoercion> {
  return {
    onExecute: ({ args, extendContext, setResultAndStopExecution }) => {
      const perItem = coerceItemByItem(args.schema, args.document, args.operationName, args.variableValues);
      if (perItem) {
        // The same args object reaches the later plugins (limits measure the kept items) and the executor.
        args.variableValues = perItem.variables;
        extendContext({ refusedItems: perItem.refusedItems });
      }
      // After per-item coercion, which takes a batch's items with bad text out one by one.
      const badText = textError(args);
      if (badText) return void setResultAndStopExecution({ errors: [badText] });
      return {
        onExecuteDone: ({ result, setResult }) => {
          if (!('errors' in result) || !result.errors || result.data !== undefined) return;
          const variables = variableArguments(args.document);
          setResult({ ...result, errors: result.errors.map((error) => (needsShape(error) ? variableError(error, variables) : error)) });
        },
      };
    },
    onSubscribe: ({ args, setResultAndStopExecution }) => {
      const badText = textError(args);
      if (badText) setResultAndStopExecution({ errors: [badText] });
    },
    onValidate:
      ({ params }) =>
      ({ result, setResult }) => {
        const inputErrors = result.filter(isLiteralInputError);
        if (inputErrors.length === 0) return;
        const paths = literalPaths(params.documentAST, inputErrors);
        setResult(result.map((error) => (isLiteralInputError(error) ? literalError(error, paths) : error)));
      },
  };
}

function textError(args: ExecutionArgs): GraphQLError | null {
  const operation = getOperationAST(args.document, args.operationName);
  const bad = operation && badTextIn(args.document, operation, args.variableValues);
  return bad ? inputError(new GraphQLError(bad.message, { nodes: bad.node }), bad.argument) : null;
}

const VARIABLE_PROBLEM =
  /^Variable "\$([_A-Za-z][_0-9A-Za-z]*)" (?:got invalid value .*? at "\1((?:\[\d+\]|\.[_A-Za-z][_0-9A-Za-z]*)*)";|)/s;

/** No code yet, or a scalar's BAD_USER_INPUT that graphql-js wrapped without saying where. */
function needsShape(error: GraphQLError): boolean {
  const code = error.extensions?.code;
  return code === undefined || (code === 'BAD_USER_INPUT' && error.extensions.argument === undefined);
}

function variableError(error: GraphQLError, variables: ReadonlyMap<string, string>): GraphQLError {
  const match = VARIABLE_PROBLEM.exec(error.message);
  const used = match ? variables.get(match[1]!) : undefined;
  const field = fieldNamedIn(error.message);
  const argument = used === undefined ? undefined : `${used}${match![2] ?? ''}${field ? `.${field}` : ''}`;
  return inputError(error, argument);
}

function isLiteralInputError(error: GraphQLError): boolean {
  if (error instanceof ScalarInputError || error.originalError instanceof ScalarInputError) return true;
  return !error.extensions?.code && (error.nodes ?? []).some(isArgumentValue);
}

function literalPaths(document: DocumentNode, errors: readonly GraphQLError[]): Map<ASTNode, string> {
  const nodes = new Set(errors.flatMap((error) => error.nodes ?? []));
  return argumentPaths(document, (node) => nodes.has(node));
}

function literalError(error: GraphQLError, paths: ReadonlyMap<ASTNode, string>): GraphQLError {
  const path = error.nodes?.map((node) => paths.get(node)).find(Boolean);
  if (!path) return error;
  const field = fieldNamedIn(error.message);
  const argument = `${path}${field ? `.${field}` : ''}`;
  const message =
    error instanceof ScalarInputError || error.originalError instanceof ScalarInputError
      ? `Invalid value for argument "${argument}": ${error.message}`
      : error.message;
  return inputError(new GraphQLError(message, { nodes: error.nodes, extensions: error.extensions }), argument);
}

function inputError(error: GraphQLError, argument: string | undefined): GraphQLError {
  return new GraphQLError(error.message, {
    nodes: error.nodes,
    extensions: { ...error.extensions, code: 'BAD_USER_INPUT', ...(argument ? { argument } : {}), http: { spec: true, status: 400 } },
  });
}
