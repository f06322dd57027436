import { useGraphQlJit } from '@envelop/graphql-jit';
import { Kind, type DocumentNode, type ExecutionResult } from 'graphql';
import { mapMaybePromise, type Plugin } from 'graphql-yoga';

/**
 * Queries and mutations run as code graphql-jit compiles once per document (Yoga keeps the parsed
 * document of each text, so a trusted document compiles once): variable coercion and result
 * completion without graphql-js's generic walk, which was half of a 1000-signal call's CPU.
 * Subscriptions stay on Yoga's executor. What the compiled code answers without `data` never
 * started executing (variables that fail coercion, a document graphql-jit cannot compile): it runs
 * again on Yoga's executor, so request errors keep graphql-js's text, which input-errors.ts reads.
 * Only documents of one operation: the plugin keeps one compiled query per document, whatever
 * `operationName` picks (GraphiQL's walk sends one document of many operations). Goes before any
 * plugin that wraps the execute function (tracing), or it would replace theirs.
 */
export function useCompiledExecution(): Plugin {
  const jit = useGraphQlJit({}, { onError: () => {} });
  return {
    onExecute(payload) {
      const { args, executeFn, setExecuteFn } = payload;
      const operation = soleOperation(args.document);
      if (operation !== 'query' && operation !== 'mutation') return;
      const fallBack: typeof setExecuteFn = (compiled) =>
        setExecuteFn((executionArgs) =>
          mapMaybePromise(compiled(executionArgs), (result) => ('data' in (result as ExecutionResult) ? result : executeFn(executionArgs))),
        );
      return jit.onExecute!({ ...payload, setExecuteFn: fallBack });
    },
  };
}

/** The kind of the document's only operation; undefined when it has several. */
function soleOperation(document: DocumentNode): string | undefined {
  let operation: string | undefined;
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.OPERATION_DEFINITION) continue;
    if (operation !== undefined) return undefined;
    operation = definition.operation;
  }
  return operation;
}
