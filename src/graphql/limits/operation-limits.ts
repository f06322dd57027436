import { GraphQLError, type ExecutionArgs } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { createCostMemo, measureOperation, type Measure } from './cost-model.js';
import { documentLimitsRule, type DocumentLimits } from './document-limits.js';
import type { Writes } from './field-cost.js';
import { limitError } from './limit-errors.js';

export interface OperationLimits extends DocumentLimits {
  maxTokens: number;
  maxCost: number;
  /** What one operation may write, across all its aliases and list arguments. */
  budget: Writes;
}

/** Where the measure of an admitted operation is left on its context, for the plugins after this one. */
const MEASURED = Symbol('measured operation');

/** The cost model's measure of the operation running in `context`, if the operation limits took it. */
export function measuredOperation(context: object): Measure | undefined {
  return (context as { [MEASURED]?: Measure })[MEASURED];
}

/**
 * Every limit on an operation, all refused before anything executes (so nothing is written), each
 * with its own code: tokens while parsing; depth, aliases and directives in validation; cost and
 * the write budget once the variables are known, in the same place for every transport (HTTP,
 * server-sent events, WebSocket) because they all go through Yoga's execute and subscribe.
 */
export function useOperationLimits(limits: OperationLimits): Plugin {
  const rule = documentLimitsRule(limits);
  const memo = createCostMemo();
  const check = (args: ExecutionArgs) => {
    const measure = measureOperation(
      args.schema,
      args.document,
      args.operationName,
      args.variableValues as Record<string, unknown> | undefined,
      memo,
    );
    if (measure && args.contextValue) (args.contextValue as { [MEASURED]?: Measure })[MEASURED] = measure;
    return measure ? overLimits(measure, limits) : null;
  };
  return {
    onParse: ({ parseFn, setParseFn }) => {
      setParseFn((source, options) => {
        try {
          return parseFn(source, { ...options, maxTokens: limits.maxTokens });
        } catch (error) {
          if (error instanceof GraphQLError && /more tha[nt] \d+ tokens/.test(error.message)) {
            throw limitError(
              'TOO_MANY_TOKENS',
              `The document has more than ${limits.maxTokens} tokens, the most allowed. Send large inputs as variables.`,
              { limit: limits.maxTokens },
            );
          }
          throw error;
        }
      });
    },
    onValidate: ({ addValidationRule }) => {
      addValidationRule(rule);
      return ({ result, setResult }) => {
        if (result.some(isValidationAborted))
          setResult(result.map((error) => (isValidationAborted(error) ? tooManyFieldsToValidate() : error)));
      };
    },
    onExecute: ({ args, setResultAndStopExecution }) => {
      const errors = check(args);
      if (errors) setResultAndStopExecution({ errors });
    },
    onSubscribe: ({ args, setResultAndStopExecution }) => {
      const errors = check(args);
      if (errors) setResultAndStopExecution({ errors });
    },
  };
}

function overLimits(measure: Measure, limits: OperationLimits): GraphQLError[] | null {
  const errors: GraphQLError[] = [];
  if (measure.signals > limits.budget.signals) {
    errors.push(
      limitError(
        'REQUEST_BUDGET_EXCEEDED',
        `This request would send ${measure.signals} signals; at most ${limits.budget.signals} are allowed in one request, across all its aliases. Split it into several requests.`,
        { budget: 'signals', requested: measure.signals, limit: limits.budget.signals },
      ),
    );
  }
  if (measure.cohortAttributions > limits.budget.cohortAttributions) {
    errors.push(
      limitError(
        'REQUEST_BUDGET_EXCEEDED',
        `This request would attribute signals to ${measure.cohortAttributions} cohorts; at most ${limits.budget.cohortAttributions} attributions are allowed in one request. Split it into several requests.`,
        { budget: 'cohortAttributions', requested: measure.cohortAttributions, limit: limits.budget.cohortAttributions },
      ),
    );
  }
  if (measure.cost > limits.maxCost) {
    errors.push(
      limitError(
        'QUERY_TOO_COMPLEX',
        `The operation could return ${measure.cost} objects (its cost); at most ${limits.maxCost} are allowed. Ask for smaller pages or fewer aliases.`,
        { cost: measure.cost, limit: limits.maxCost },
      ),
    );
  }
  return errors.length > 0 ? errors : null;
}

/** graphql-js gives up comparing overlapping fields past a budget and says only "Validation aborted.". */
function isValidationAborted(error: Error): boolean {
  return error.message === 'Validation aborted.';
}

function tooManyFieldsToValidate(): GraphQLError {
  return limitError(
    'QUERY_TOO_COMPLEX',
    'The document repeats too many fields to be validated. Select each field once (use aliases for different arguments).',
  );
}
